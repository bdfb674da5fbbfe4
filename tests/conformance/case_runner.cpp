// Case execution: load (any refusal is a failure with its reason), bind input_K.pb to the K-th model
// input, run, compare output_K.pb with the K-th output. Isolation: fork, pipe the result back.
#include "case_runner.h"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <vector>

#include "kiln/model_info.h"
#include "kiln/session.h"
#include "kiln/tensor_io.h"
#include "tensor_compare.h"

namespace kiln::conformance {

namespace fs = std::filesystem;

namespace {

CaseResult fail(std::string reason) { return {CaseStatus::kFail, std::move(reason)}; }

// test_data_set_0, test_data_set_1, ... in numeric order.
std::vector<fs::path> data_sets(const std::string& case_dir) {
  std::vector<std::pair<int, fs::path>> sets;
  const std::string prefix = "test_data_set_";
  for (const auto& entry : fs::directory_iterator(case_dir)) {
    const std::string name = entry.path().filename().string();
    if (entry.is_directory() && name.rfind(prefix, 0) == 0) sets.emplace_back(std::stoi(name.substr(prefix.size())), entry.path());
  }
  std::sort(sets.begin(), sets.end());
  std::vector<fs::path> paths;
  for (auto& [index, path] : sets) paths.push_back(path);
  return paths;
}

// The files <stem>_0.pb, <stem>_1.pb, ... present in `dir`, in order.
std::vector<fs::path> numbered_files(const fs::path& dir, const std::string& stem) {
  std::vector<fs::path> files;
  for (int k = 0; fs::exists(dir / (stem + "_" + std::to_string(k) + ".pb")); ++k)
    files.push_back(dir / (stem + "_" + std::to_string(k) + ".pb"));
  return files;
}

// Reads <stem>_K.pb files; their values are declared by `infos` (by position).
Result<std::vector<Value>> read_values(const fs::path& dir, const std::string& stem,
                                       const std::vector<TensorInfo>& infos) {
  std::vector<fs::path> files = numbered_files(dir, stem);
  if (files.size() != infos.size())
    return invalid_argument(dir.filename().string() + " has " + std::to_string(files.size()) + " " + stem +
                            " files but the model has " + std::to_string(infos.size()) + " " + stem + "s");
  std::vector<Value> values;
  for (size_t k = 0; k < files.size(); ++k) {
    KILN_ASSIGN_OR_RETURN(Value v, read_value_file(files[k].string(), infos[k].kind, infos[k].dtype));
    values.push_back(std::move(v));
  }
  return values;
}

bool draws_random_numbers(const std::string& model_path) {
  auto info = inspect_model(model_path);
  if (!info.is_ok()) return false;
  for (const char* op : {"Bernoulli", "RandomUniform", "RandomUniformLike", "RandomNormal", "RandomNormalLike", "Multinomial"})
    if (info.value().op_histogram.count(op)) return true;
  return false;
}

// Random draws cannot match the test data: compare what can be compared.
std::optional<std::string> compare_structure(const Value& got, const Value& want) {
  if (got.kind() != want.kind()) return "got a " + got.describe() + ", want a " + want.describe();
  if (got.is_tensor() && (got.tensor().dtype() != want.tensor().dtype() || got.tensor().shape() != want.tensor().shape()))
    return "got " + got.describe() + ", want " + want.describe();
  return std::nullopt;
}

CaseResult run_data_set(Session& session, const fs::path& set, bool random) {
  const std::string where = set.filename().string() + ": ";
  Result<std::vector<Value>> inputs = read_values(set, "input", session.inputs());
  if (!inputs.is_ok()) return fail(where + inputs.status().to_string());
  Result<std::vector<Value>> wanted = read_values(set, "output", session.outputs());
  if (!wanted.is_ok()) return fail(where + wanted.status().to_string());
  std::map<std::string, Value> feeds;
  for (size_t k = 0; k < inputs->size(); ++k) feeds[session.inputs()[k].name] = (*inputs)[k];
  Result<std::map<std::string, Value>> got = session.run_values(feeds);
  if (!got.is_ok()) return fail(where + "run failed: " + got.status().to_string());
  for (size_t k = 0; k < wanted->size(); ++k) {
    const std::string& name = session.outputs()[k].name;
    auto it = got->find(name);
    if (it == got->end()) return fail(where + "output '" + name + "' is missing");
    auto diff = random ? compare_structure(it->second, (*wanted)[k]) : compare_values(it->second, (*wanted)[k]);
    if (diff) return fail(where + "output " + std::to_string(k) + " '" + name + "': " + *diff);
  }
  return {CaseStatus::kPass, ""};
}

// Writes all of `text` to `fd`.
void write_all(int fd, const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

// Reads the child's result until it closes the pipe or `timeout_s` passes; nullopt on timeout.
std::optional<std::string> read_result(int fd, int timeout_s) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  std::string text;
  char buf[4096];
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return std::nullopt;
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
    ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n <= 0) return text;
    text.append(buf, static_cast<size_t>(n));
  }
}

}  // namespace

const char* case_status_name(CaseStatus status) {
  switch (status) {
    case CaseStatus::kPass: return "pass";
    case CaseStatus::kFail: return "fail";
    case CaseStatus::kRandom: return "random";
  }
  return "fail";
}

CaseResult run_case(const std::string& case_dir, const CaseSetup& setup) {
  SessionOptions options;
  options.isa = setup.isa;
  options.providers = {setup.provider};
  options.mode = setup.mode;
  Result<std::unique_ptr<Session>> session = Session::load(case_dir + "/model.onnx", options);
  if (!session.is_ok()) {
    return fail("load failed: " + session.status().to_string());
  }
  const bool random = draws_random_numbers(case_dir + "/model.onnx");
  for (const fs::path& set : data_sets(case_dir)) {
    CaseResult r = run_data_set(*session.value(), set, random);
    if (r.status != CaseStatus::kPass) return r;
  }
  if (random) return {CaseStatus::kRandom, "random draws: output dtypes and shapes checked; values by tests/ops/random_test.cpp"};
  return {CaseStatus::kPass, ""};
}

CaseResult run_case_isolated(const std::string& case_dir, const CaseSetup& setup, int timeout_s) {
  int fds[2];
  if (::pipe(fds) != 0) return fail("cannot create a pipe");
  pid_t pid = ::fork();
  if (pid < 0) return fail("cannot fork");
  if (pid == 0) {
    ::close(fds[0]);
    CaseResult r = run_case(case_dir, setup);
    write_all(fds[1], std::string(1, static_cast<char>('0' + static_cast<int>(r.status))) + r.reason);
    ::close(fds[1]);
    ::_exit(0);
  }
  ::close(fds[1]);
  // Read before waiting: a long reason could otherwise fill the pipe and block the child.
  std::optional<std::string> text = read_result(fds[0], timeout_s);
  ::close(fds[0]);
  if (!text) ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (!text) return fail("timed out after " + std::to_string(timeout_s) + " s");
  if (WIFSIGNALED(status)) return fail("crashed with signal " + std::to_string(WTERMSIG(status)));
  if (text->empty()) return fail("the case process exited without a result");
  return {static_cast<CaseStatus>((*text)[0] - '0'), text->substr(1)};
}

}  // namespace kiln::conformance
