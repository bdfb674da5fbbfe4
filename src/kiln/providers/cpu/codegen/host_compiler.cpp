// Host compiler: locating it, identifying it, and running it as a child process.
#include "kiln/providers/cpu/codegen/host_compiler.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

#include "kiln/io/file.h"
#include "kiln/io/temporary_folder.h"

extern char** environ;

namespace kiln::codegen {
namespace {

// `name` as a program path: itself when it holds a '/', else the first executable on PATH.
std::string on_path(const std::string& name) {
  if (name.find('/') != std::string::npos) return access(name.c_str(), X_OK) == 0 ? name : "";
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "/usr/bin:/bin");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    const std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    struct stat st {};
    if (stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

// Runs `argv` with stdout and stderr going to `log`; its exit status, or -1 when it cannot start.
int run(const std::vector<std::string>& argv, const std::string& log) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) return -1;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string first_lines(const std::string& text, int lines) {
  size_t end = 0;
  for (int i = 0; i < lines && end != std::string::npos; ++i) end = text.find('\n', end == 0 ? 0 : end + 1);
  return end == std::string::npos ? text : text.substr(0, end);
}

}  // namespace

Result<HostCompiler> HostCompiler::find() {
  std::vector<std::string> names = {"c++", "g++", "clang++"};
  const char* chosen = std::getenv("KILN_CXX");
  if (chosen && *chosen) names = {chosen};
  std::string searched;
  for (const std::string& name : names) {
    searched += (searched.empty() ? "" : ", ") + name;
    const std::string path = on_path(name);
    if (path.empty()) continue;
    io::TemporaryFolder scratch("kiln-cc");
    if (scratch.path().empty()) return unsupported_target("no temporary folder for the compiler's output");
    const std::string log = scratch.path() + "/version.txt";
    if (run({path, "--version"}, log) != 0) continue;
    Result<std::string> version = io::read_file(log);
    if (!version.is_ok() || version->empty()) continue;
    return HostCompiler(path, first_lines(*version, 1));
  }
  return unsupported_target("jit code generation needs a C++ compiler and none runs here (searched " + searched +
                            (chosen && *chosen ? " from $KILN_CXX" : " on PATH; set $KILN_CXX to choose one") + ")");
}

std::vector<std::string> HostCompiler::used_features(const std::vector<std::string>& features) {
  static const std::set<std::string> kUsed = {"avx", "avx2", "fma", "f16c", "avx512f", "avx512bw", "avx512dq", "avx512vl", "avx512cd"};
  std::vector<std::string> used;
  for (const std::string& f : features)
    if (kUsed.count(f)) used.push_back(f);
  return used;
}

std::vector<std::string> HostCompiler::flags_for(const std::vector<std::string>& features) {
  std::vector<std::string> flags = {"-std=c++17", "-O3", "-fno-math-errno", "-fopenmp", "-fPIC", "-shared", "-fvisibility=default"};
  for (const std::string& f : used_features(features)) flags.push_back("-m" + f);
  if (std::find(features.begin(), features.end(), "avx512f") != features.end()) flags.push_back("-mprefer-vector-width=512");
  return flags;
}

Status HostCompiler::compile(const std::string& source, const std::vector<std::string>& flags, const std::string& output) const {
  io::TemporaryFolder scratch("kiln-cc");
  if (scratch.path().empty()) return backend_failure("no temporary folder for the compiler");
  const std::string source_path = scratch.path() + "/kernels.cpp", log = scratch.path() + "/compiler.txt";
  KILN_RETURN_IF_ERROR(io::write_file_atomic(source_path, source));
  // The scratch folder's name is random: mapped away so the same source gives the same bytes.
  std::vector<std::string> argv = {path_, "-ffile-prefix-map=" + scratch.path() + "=."};
  argv.insert(argv.end(), flags.begin(), flags.end());
  argv.insert(argv.end(), {source_path, "-o", output});
  const int status = run(argv, log);
  if (status == 0) return Status::ok();
  Result<std::string> messages = io::read_file(log);
  return backend_failure(path_ + (status < 0 ? " could not be run" : " failed (exit " + std::to_string(status) + ")") +
                         " compiling generated kernels" +
                         (messages.is_ok() && !messages->empty() ? ":\n" + first_lines(*messages, 20) : std::string()));
}

}  // namespace kiln::codegen
