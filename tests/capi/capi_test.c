/* The C API (include/kiln/kiln_c.h) used from plain C99, as a consumer would: it links libkiln.so,
 * loads a model, describes it, runs it from two threads at once and checks that every run gives
 * the serial run's outputs, provokes each error class that input can cause, and frees everything
 * (built with AddressSanitizer, whose leak check fails the test on a leak).
 * Usage: capi_test GPT2_DECODER_DIR UNKNOWN_OP_MODEL WORK_DIR
 * Prints one line per check and "N checks, N failed"; exits 1 when any failed. */
#include <kiln/kiln_c.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const KilnApi* api;
static int checks, failures;

static void expect(int ok, const char* what) {
  ++checks;
  if (!ok) ++failures;
  printf("%s %s\n", ok ? "ok    " : "FAILED", what);
}

/* Checks that `status` is NULL (success), releasing it otherwise. */
static int succeeded(KilnStatus* status, const char* what) {
  if (status) printf("       %s: %s\n", what, api->GetErrorMessage(status));
  expect(status == NULL, what);
  api->ReleaseStatus(status);
  return status == NULL;
}

/* Checks that `status` has class `code` and a message containing `needle`. */
static void failed_with(KilnStatus* status, KilnErrorCode code, const char* needle, const char* what) {
  const int ok = status && api->GetErrorCode(status) == code && strstr(api->GetErrorMessage(status), needle);
  if (!ok) printf("       got %d: %s\n", (int)api->GetErrorCode(status), api->GetErrorMessage(status));
  expect(ok, what);
  api->ReleaseStatus(status);
}

static char* read_file(const char* path, size_t* size) {
  FILE* f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  *size = (size_t)ftell(f);
  fseek(f, 0, SEEK_SET);
  char* data = malloc(*size);
  if (data && fread(data, 1, *size, f) != *size) {
    free(data);
    data = NULL;
  }
  fclose(f);
  return data;
}

enum { kSeq = 32, kVocabProbe = 16, kRounds = 20 };

typedef struct {
  KilnSession* session;
  KilnTensor* ids;
  const float* expected;
  size_t expected_floats;
  int mismatches, errors;
} Worker;

static float* run_logits(KilnSession* session, KilnTensor* ids, size_t* floats, KilnStatus** status) {
  const char* in_name = "input_ids";
  const char* out_name = "logits";
  KilnTensor* logits = NULL;
  *status = api->Run(session, NULL, &in_name, (const KilnTensor* const*)&ids, 1, &out_name, 1, &logits);
  if (*status) return NULL;
  void* data;
  size_t bytes;
  KilnStatus* s = api->GetTensorData(logits, &data, &bytes);
  api->ReleaseStatus(s);
  float* copy = malloc(bytes);
  memcpy(copy, data, bytes);
  *floats = bytes / sizeof(float);
  api->ReleaseTensor(logits);
  return copy;
}

static void* worker_main(void* arg) {
  Worker* w = arg;
  for (int round = 0; round < kRounds; ++round) {
    KilnStatus* status;
    size_t floats = 0;
    float* got = run_logits(w->session, w->ids, &floats, &status);
    if (status) {
      ++w->errors;
      api->ReleaseStatus(status);
      continue;
    }
    if (floats != w->expected_floats || memcmp(got, w->expected, floats * sizeof(float)) != 0) ++w->mismatches;
    free(got);
  }
  return NULL;
}

int main(int argc, char** argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: %s GPT2_DECODER_DIR UNKNOWN_OP_MODEL WORK_DIR\n", argv[0]);
    return 2;
  }
  char model[4096], artifact[4096], missing[4096];
  snprintf(model, sizeof model, "%s/model.onnx", argv[1]);
  snprintf(artifact, sizeof artifact, "%s/capi.kiln", argv[3]);
  snprintf(missing, sizeof missing, "%s/no_such_model.onnx", argv[3]);

  api = KilnGetApi(KILN_API_VERSION);
  expect(api != NULL && api->version == KILN_API_VERSION, "KilnGetApi(KILN_API_VERSION) gives the table");
  if (!api) return 1;
  expect(KilnGetApi(KILN_API_VERSION + 1) == NULL, "a version newer than the library's gives NULL");
  expect(KilnGetApi(1) != NULL && KilnGetApi(1)->SetRunTerminate == api->SetRunTerminate,
         "a program built against version 1 gets a table whose version-1 functions are the same");
  expect(strlen(api->GetLibraryVersion()) > 0, "the library names its version");

  KilnEnv* env = NULL;
  KilnSessionOptions* options = NULL;
  succeeded(api->CreateEnv(&env), "CreateEnv");
  succeeded(api->CreateSessionOptions(&options), "CreateSessionOptions");
  failed_with(api->SetMaxLoopIterations(options, -1), KILN_INVALID_ARGUMENT, "iterations", "a negative loop bound: invalid_argument");
  succeeded(api->SetMaxLoopIterations(options, 1000000), "SetMaxLoopIterations");
  KilnSessionOptions* tight = NULL;
  succeeded(api->CreateSessionOptions(&tight), "CreateSessionOptions (a tight memory limit)");
  failed_with(api->SetMemoryLimit(tight, -1), KILN_INVALID_ARGUMENT, "bytes", "a negative memory limit: invalid_argument");
  succeeded(api->SetMemoryLimit(tight, 65536), "SetMemoryLimit 64 KiB");
  KilnSession* refused = NULL;
  failed_with(api->CreateSession(env, model, tight, &refused), KILN_ALLOCATION_FAILURE, "memory limit",
              "a model past the memory limit: allocation_failure naming the limit");
  expect(refused == NULL, "no session past the memory limit");
  api->ReleaseSessionOptions(tight);
  KilnSessionOptions* precise = NULL;
  succeeded(api->CreateSessionOptions(&precise), "CreateSessionOptions (an unknown precision)");
  failed_with(api->SetPrecision(precise, NULL, NULL, 0), KILN_INVALID_ARGUMENT, "precision", "a NULL precision: invalid_argument");
  const char* kept[] = {"MatMul"};
  succeeded(api->SetPrecision(precise, "fp64", kept, 1), "SetPrecision fp64 keeping MatMul");
  succeeded(api->SetAccuracyBudget(precise, "rel=0.1"), "SetAccuracyBudget");
  failed_with(api->CreateSession(env, model, precise, &refused), KILN_INVALID_ARGUMENT, "fp64",
              "an unknown precision: invalid_argument naming it");
  succeeded(api->SetPrecision(precise, "int8", kept, 1), "SetPrecision int8 keeping MatMul");
  failed_with(api->SetOnBudget(precise, NULL), KILN_INVALID_ARGUMENT, "policy", "a NULL budget policy: invalid_argument");
  succeeded(api->SetOnBudget(precise, "retry"), "SetOnBudget retry");
  failed_with(api->CreateSession(env, model, precise, &refused), KILN_INVALID_ARGUMENT, "retry",
              "an unknown budget policy: invalid_argument naming it");
  api->ReleaseSessionOptions(precise);
  succeeded(api->SetThreads(options, 2), "SetThreads");
  succeeded(api->SetShapeRange(options, "batch", 1, 1, 1), "SetShapeRange batch 1:1:1");

  KilnSession* session = NULL;
  if (!succeeded(api->CreateSession(env, model, options, &session), "CreateSession (gpt2_decoder)")) return 1;

  size_t inputs = 0, outputs = 0;
  succeeded(api->GetInputCount(session, &inputs), "GetInputCount");
  succeeded(api->GetOutputCount(session, &outputs), "GetOutputCount");
  expect(inputs == 1 && outputs == 1, "one input, one output");
  const char* name = NULL;
  KilnDataType dtype = KILN_DTYPE_UNDEFINED;
  int64_t rank = 0, dims[2] = {0, 0};
  succeeded(api->GetInputName(session, 0, &name), "GetInputName");
  succeeded(api->GetInputType(session, 0, &dtype, &rank), "GetInputType");
  succeeded(api->GetInputDims(session, 0, dims, 2), "GetInputDims");
  expect(strcmp(name, "input_ids") == 0 && dtype == KILN_DTYPE_INT64 && rank == 2 && dims[0] == -1 && dims[1] == kSeq,
         "input_ids: int64[batch, 32], batch symbolic (-1)");

  /* Input ids over the caller's memory. */
  int64_t ids_data[kSeq];
  for (int i = 0; i < kSeq; ++i) ids_data[i] = (i * 37) % kVocabProbe;
  const int64_t ids_dims[2] = {1, kSeq};
  KilnTensor* ids = NULL;
  succeeded(api->CreateTensorOverData(KILN_DTYPE_INT64, ids_dims, 2, ids_data, sizeof ids_data, &ids), "CreateTensorOverData");

  KilnStatus* status = NULL;
  size_t floats = 0;
  float* expected = run_logits(session, ids, &floats, &status);
  if (!succeeded(status, "Run (serial)")) return 1;
  int finite = floats > 0;
  for (size_t i = 0; i < floats; ++i) finite = finite && expected[i] == expected[i];
  expect(finite, "the logits are numbers");

  /* Two threads, kRounds runs each, on the one session: every result equals the serial one. */
  Worker workers[2] = {{session, ids, expected, floats, 0, 0}, {session, ids, expected, floats, 0, 0}};
  pthread_t threads[2];
  for (int t = 0; t < 2; ++t) pthread_create(&threads[t], NULL, worker_main, &workers[t]);
  for (int t = 0; t < 2; ++t) pthread_join(threads[t], NULL);
  expect(workers[0].errors + workers[1].errors == 0, "runs from two threads succeed");
  expect(workers[0].mismatches + workers[1].mismatches == 0, "runs from two threads give the serial outputs");

  /* The report. */
  char* report = NULL;
  succeeded(api->GetReportJson(session, &report), "GetReportJson");
  expect(report && strstr(report, "\"runs\"") != NULL, "the report is JSON with the run section");
  api->ReleaseString(report);

  /* Static int8: calibration sets and their method, validation sets; each is in the report. */
  KilnSessionOptions* calibrated = NULL;
  succeeded(api->CreateSessionOptions(&calibrated), "CreateSessionOptions (calibrated int8)");
  succeeded(api->SetPrecision(calibrated, "int8", NULL, 0), "SetPrecision int8");
  const char* ids_name = "input_ids";
  const char* no_name = NULL;
  failed_with(api->AddCalibrationInputs(calibrated, &no_name, (const KilnTensor* const*)&ids, 1), KILN_INVALID_ARGUMENT, "no name",
              "a calibration input without a name: invalid_argument");
  succeeded(api->AddCalibrationInputs(calibrated, &ids_name, (const KilnTensor* const*)&ids, 1), "AddCalibrationInputs");
  succeeded(api->AddValidationInputs(calibrated, &ids_name, (const KilnTensor* const*)&ids, 1), "AddValidationInputs");
  succeeded(api->SetCalibrationMethod(calibrated, "median"), "SetCalibrationMethod median");
  failed_with(api->CreateSession(env, model, calibrated, &refused), KILN_INVALID_ARGUMENT, "median",
              "an unknown calibration method: invalid_argument naming it");
  succeeded(api->SetCalibrationMethod(calibrated, "percentile"), "SetCalibrationMethod percentile");
  KilnSession* static_int8 = NULL;
  if (succeeded(api->CreateSession(env, model, calibrated, &static_int8), "CreateSession (calibrated int8)")) {
    char* calibrated_report = NULL;
    succeeded(api->GetReportJson(static_int8, &calibrated_report), "GetReportJson (calibrated int8)");
    expect(calibrated_report && strstr(calibrated_report, "\"method\": \"percentile\"") != NULL &&
               strstr(calibrated_report, "\"input_quantization\"") != NULL && strstr(calibrated_report, "\"validation_inputs\": \"given\"") != NULL,
           "the report records the calibration, each calibrated product's input scale, and the given validation set");
    api->ReleaseString(calibrated_report);
    api->ReleaseSession(static_int8);
  }
  api->ReleaseSessionOptions(calibrated);

  /* invalid_argument: a wrong dtype, a missing input, an unknown output, a bad option. */
  float wrong_data[kSeq] = {0};
  KilnTensor* wrong = NULL;
  succeeded(api->CreateTensorOverData(KILN_DTYPE_FLOAT, ids_dims, 2, wrong_data, sizeof wrong_data, &wrong), "a float tensor");
  const char* in_name = "input_ids";
  const char* out_name = "logits";
  const char* bad_out = "probabilities";
  KilnTensor* out = NULL;
  failed_with(api->Run(session, NULL, &in_name, (const KilnTensor* const*)&wrong, 1, &out_name, 1, &out),
              KILN_INVALID_ARGUMENT, "input_ids", "a float input where int64 is declared: invalid_argument naming it");
  failed_with(api->Run(session, NULL, NULL, NULL, 0, &out_name, 1, &out), KILN_INVALID_ARGUMENT, "input_ids",
              "a missing input: invalid_argument naming it");
  failed_with(api->Run(session, NULL, &in_name, (const KilnTensor* const*)&ids, 1, &bad_out, 1, &out), KILN_INVALID_ARGUMENT,
              "probabilities", "an unknown output name: invalid_argument naming it");
  failed_with(api->SetThreads(options, -1), KILN_INVALID_ARGUMENT, "threads", "negative threads: invalid_argument");
  failed_with(api->CreateTensorOverData(KILN_DTYPE_INT64, ids_dims, 2, ids_data, 3, &out), KILN_INVALID_ARGUMENT, "bytes",
              "data shorter than the shape: invalid_argument");
  failed_with(api->GetInputName(session, 5, &name), KILN_INVALID_ARGUMENT, "out of range", "input index out of range");
  failed_with(api->CreateSession(env, model, options, NULL), KILN_INVALID_ARGUMENT, "NULL", "a NULL out pointer");
  api->ReleaseTensor(wrong);

  /* shape_guard_failure: batch 2 outside the range 1:1:1. */
  int64_t two_rows[2 * kSeq] = {0};
  const int64_t two_dims[2] = {2, kSeq};
  KilnTensor* batch2 = NULL;
  succeeded(api->CreateTensorOverData(KILN_DTYPE_INT64, two_dims, 2, two_rows, sizeof two_rows, &batch2), "a batch of 2");
  failed_with(api->Run(session, NULL, &in_name, (const KilnTensor* const*)&batch2, 1, &out_name, 1, &out),
              KILN_SHAPE_GUARD_FAILURE, "batch", "batch 2 outside 1:1:1: shape_guard_failure naming the symbol");
  api->ReleaseTensor(batch2);

  /* integrity_failure: an artifact with a flipped byte. */
  if (succeeded(api->WriteArtifact(session, artifact), "WriteArtifact")) {
    size_t size = 0;
    char* bytes = read_file(artifact, &size);
    expect(bytes != NULL && size > 1024, "the artifact was written");
    if (bytes) {
      bytes[size / 2] ^= 0x10;
      FILE* f = fopen(artifact, "wb");
      fwrite(bytes, 1, size, f);
      fclose(f);
      free(bytes);
    }
    KilnSession* broken = NULL;
    failed_with(api->CreateSession(env, artifact, NULL, &broken), KILN_INTEGRITY_FAILURE, "", "a corrupted artifact: integrity_failure");
  }

  /* invalid_model: half of the model's bytes; not_found; unsupported_operator; unsupported_target. */
  size_t model_size = 0;
  char* model_bytes = read_file(model, &model_size);
  KilnSession* other = NULL;
  failed_with(api->CreateSessionFromBytes(env, model_bytes, model_size / 2, NULL, &other), KILN_INVALID_MODEL, "",
              "a truncated model: invalid_model");
  if (succeeded(api->CreateSessionFromBytes(env, model_bytes, model_size, NULL, &other), "CreateSessionFromBytes (whole)"))
    api->ReleaseSession(other);
  free(model_bytes);
  failed_with(api->CreateSession(env, missing, NULL, &other), KILN_NOT_FOUND, "no_such_model", "a missing file: not_found");
  failed_with(api->CreateSession(env, argv[2], NULL, &other), KILN_UNSUPPORTED_OPERATOR, "Frobnicate",
              "an unknown operator: unsupported_operator naming it");
  KilnSessionOptions* gpu = NULL;
  succeeded(api->CreateSessionOptions(&gpu), "CreateSessionOptions (2)");
  const char* providers[] = {"cuda"};
  succeeded(api->SetProviders(gpu, providers, 1), "SetProviders cuda");
  failed_with(api->CreateSession(env, model, gpu, &other), KILN_UNSUPPORTED_TARGET, "cuda", "an unknown provider: unsupported_target");
  api->ReleaseSessionOptions(gpu);

  /* allocation_failure: a tensor no machine holds. */
  const int64_t huge[3] = {1 << 30, 1 << 30, 1 << 20};
  failed_with(api->CreateTensor(KILN_DTYPE_FLOAT, huge, 3, &out), KILN_ALLOCATION_FAILURE, "", "an impossible tensor: allocation_failure");

  KilnRunOptions* run_options = NULL;
  succeeded(api->CreateRunOptions(&run_options), "CreateRunOptions");
  succeeded(api->SetRunTag(run_options, "capi-test"), "SetRunTag");
  succeeded(api->SetRunThreads(run_options, 1), "SetRunThreads");
  succeeded(api->SetRunTerminate(run_options, 1), "SetRunTerminate 1");
  KilnTensor* never = NULL;
  failed_with(api->Run(session, run_options, &in_name, (const KilnTensor* const*)&ids, 1, &out_name, 1, &never), KILN_CANCELLED,
              "capi-test", "a terminated run: cancelled, naming the run's tag");
  succeeded(api->SetRunTerminate(run_options, 0), "SetRunTerminate 0");
  failed_with(api->SetRunTimeout(run_options, -1.0), KILN_INVALID_ARGUMENT, "milliseconds", "a negative timeout: invalid_argument");
  succeeded(api->SetRunTimeout(run_options, 1e-9), "SetRunTimeout 1e-9");
  failed_with(api->Run(session, run_options, &in_name, (const KilnTensor* const*)&ids, 1, &out_name, 1, &never), KILN_CANCELLED,
              "deadline", "a run past its deadline: cancelled");
  succeeded(api->SetRunTimeout(run_options, 0.0), "SetRunTimeout 0 (none)");
  KilnTensor* logits = NULL;
  if (succeeded(api->Run(session, run_options, &in_name, (const KilnTensor* const*)&ids, 1, &out_name, 1, &logits),
                "Run with run options")) {
    KilnDataType out_type;
    size_t out_rank = 0;
    int64_t out_dims[3] = {0, 0, 0};
    succeeded(api->GetTensorType(logits, &out_type, &out_rank), "GetTensorType");
    succeeded(api->GetTensorDims(logits, out_dims, 3), "GetTensorDims");
    expect(out_type == KILN_DTYPE_FLOAT && out_rank == 3 && out_dims[0] == 1 && out_dims[1] == kSeq, "logits: float[1, 32, vocab]");
    api->ReleaseTensor(logits);
  }
  api->ReleaseRunOptions(run_options);

  free(expected);
  api->ReleaseTensor(ids);
  api->ReleaseSession(session);
  api->ReleaseSessionOptions(options);
  api->ReleaseEnv(env);
  api->ReleaseStatus(NULL);
  printf("%d checks, %d failed\n", checks, failures);
  return failures == 0 ? 0 : 1;
}
