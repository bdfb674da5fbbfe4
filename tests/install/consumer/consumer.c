/* Uses the installed C API: loads the model given, prints its first input's name and type. */
#include <kiln/kiln_c.h>
#include <stdio.h>

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  const KilnApi* api = KilnGetApi(KILN_API_VERSION);
  if (!api) return 1;
  KilnEnv* env = NULL;
  KilnSession* session = NULL;
  KilnStatus* status = api->CreateEnv(&env);
  if (!status) status = api->CreateSession(env, argv[1], NULL, &session);
  if (status) {
    fprintf(stderr, "%s\n", api->GetErrorMessage(status));
    api->ReleaseStatus(status);
    return 1;
  }
  const char* name = NULL;
  KilnDataType dtype;
  int64_t rank;
  api->ReleaseStatus(api->GetInputName(session, 0, &name));
  api->ReleaseStatus(api->GetInputType(session, 0, &dtype, &rank));
  printf("c input %s dtype %d rank %lld (kiln %s)\n", name, (int)dtype, (long long)rank, api->GetLibraryVersion());
  api->ReleaseSession(session);
  api->ReleaseEnv(env);
  return 0;
}
