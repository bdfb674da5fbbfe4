// Every allocation of a small model's load and run made to fail in turn (graph mode on one and two
// threads, eager mode, a stream's call, and from a signed .kiln artifact): for each N, the N-th
// allocation from the moment the load begins fails (operator new throws std::bad_alloc or returns
// null, as the caller asked); the load or the run must then end with a classified
// AllocationFailure (never a crash, never a wrong answer), and a session whose run failed must give
// the right outputs on its next run. Its own program: it replaces the global operator new. One
// allocation is never failed: nlohmann::json's destructor's (noexcept; it cannot report a failure,
// so the next allocation fails in its place).
#include <execinfo.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <new>

#include "kiln/artifact/signing.h"
#include "kiln/io/file.h"
#include "kiln/session.h"
#include "kiln/stream.h"
#include "support/model_builder.h"

namespace {

// -1: no failure armed; else the allocations left before the one that fails.
std::atomic<int64_t> g_allocations_left{-1};
std::atomic<bool> g_failed{false};

// Whether the calling code is nlohmann::json's destructor, which allocates a stack to free nested
// values and cannot fail (it is noexcept: any program would end there). Read from the call stack
// (the program is linked with its symbols exported).
bool in_json_destructor() {
  void* frames[64];
  const int count = backtrace(frames, 64);
  char** names = backtrace_symbols(frames, count);  // malloc, not operator new
  bool found = false;
  for (int i = 0; names && i < count && !found; ++i) found = std::strstr(names[i], "json_value7destroy") != nullptr;
  std::free(names);
  return found;
}

bool this_allocation_fails() {
  if (g_allocations_left.load(std::memory_order_relaxed) < 0) return false;
  if (g_allocations_left.fetch_sub(1, std::memory_order_relaxed) != 1) return false;
  if (in_json_destructor()) {
    g_allocations_left = 1;  // the next allocation fails instead
    return false;
  }
  g_failed = true;
  return true;
}

void* allocate(size_t bytes, size_t alignment) {
  if (this_allocation_fails()) return nullptr;
  bytes = bytes ? bytes : 1;
  if (alignment <= alignof(std::max_align_t)) return std::malloc(bytes);
  void* p = nullptr;
  return posix_memalign(&p, alignment, bytes) == 0 ? p : nullptr;
}

void* allocate_or_throw(size_t bytes, size_t alignment) {
  void* p = allocate(bytes, alignment);
  if (!p) throw std::bad_alloc();
  return p;
}

}  // namespace

void* operator new(size_t bytes) { return allocate_or_throw(bytes, 0); }
void* operator new[](size_t bytes) { return allocate_or_throw(bytes, 0); }
void* operator new(size_t bytes, std::align_val_t a) { return allocate_or_throw(bytes, static_cast<size_t>(a)); }
void* operator new[](size_t bytes, std::align_val_t a) { return allocate_or_throw(bytes, static_cast<size_t>(a)); }
void* operator new(size_t bytes, const std::nothrow_t&) noexcept { return allocate(bytes, 0); }
void* operator new[](size_t bytes, const std::nothrow_t&) noexcept { return allocate(bytes, 0); }
void* operator new(size_t bytes, std::align_val_t a, const std::nothrow_t&) noexcept {
  return allocate(bytes, static_cast<size_t>(a));
}
void* operator new[](size_t bytes, std::align_val_t a, const std::nothrow_t&) noexcept {
  return allocate(bytes, static_cast<size_t>(a));
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t, std::align_val_t) noexcept { std::free(p); }

namespace kiln {
namespace {

using testing::ModelBuilder;
using testing::ScratchDir;
constexpr int kFloat = onnx::TensorProto::FLOAT;

// y = Softmax(Relu(x[N,8] W[8,8] + b)), z = Concat(y, x) reshaped: a oneDNN matmul, Kiln's own
// element-wise and softmax kernels, a shape computed at run time.
std::string small_model(const ScratchDir& dir) {
  ModelBuilder b;
  b.input("x", kFloat, {std::string("N"), int64_t{8}});
  b.output("y", kFloat, {std::string("N"), int64_t{8}});
  b.output("z", kFloat, {std::string("M")});
  std::vector<float> w(64), bias(8);
  for (size_t i = 0; i < w.size(); ++i) w[i] = 0.01f * static_cast<float>(i % 17) - 0.05f;
  for (size_t i = 0; i < bias.size(); ++i) bias[i] = 0.1f * static_cast<float>(i);
  b.float_initializer("w", {8, 8}, w);
  b.float_initializer("b", {8}, bias);
  b.int64_initializer("flat", {1}, {-1});
  b.node("MatMul", {"x", "w"}, {"xw"}, "matmul");
  b.node("Add", {"xw", "b"}, {"xwb"}, "add");
  b.node("Relu", {"xwb"}, {"r"}, "relu");
  b.node("Softmax", {"r"}, {"y"}, "softmax");
  ModelBuilder::int_attribute(b.node("Concat", {"y", "x"}, {"c"}, "concat"), "axis", 1);
  b.node("Reshape", {"c", "flat"}, {"z"}, "reshape");
  return b.save(dir.file("small.onnx"));
}

struct Trial {
  Status load, run, rerun;
  std::map<std::string, Tensor> outputs, rerun_outputs;
  bool failed = false;  // the armed allocation happened
};

using Outputs = std::map<std::string, Tensor>;
// How a trial runs the session: Session::run, or a stream's call.
using Runner = Result<Outputs> (*)(Session&, const Outputs&);

Result<Outputs> run_once(Session& session, const Outputs& inputs) { return session.run(inputs); }

Result<Outputs> run_as_stream(Session& session, const Outputs& inputs) {
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<Stream> stream, session.open_stream());
  try {  // the caller's copies of tensors (bind_input's argument, output()'s result): std::bad_alloc
    for (const auto& [name, tensor] : inputs) KILN_RETURN_IF_ERROR(stream->bind_input(name, tensor));
  } catch (const std::bad_alloc&) {
    return allocation_failure("copying an input to bind");
  }
  KILN_RETURN_IF_ERROR(stream->run());
  try {
    Outputs outputs;
    for (const TensorInfo& output : session.outputs()) {
      KILN_ASSIGN_OR_RETURN(outputs[output.name], stream->output(output.name));
    }
    return outputs;
  } catch (const std::bad_alloc&) {
    return allocation_failure("copying the stream's outputs");
  }
}

// Loads and runs with the `n`-th allocation failing (n 0: none), then runs again with none.
Trial trial(const std::string& model, const SessionOptions& options, Runner runner, const Outputs& inputs, int64_t n) {
  Result<std::map<std::string, Tensor>> run = invalid_argument("not run");  // made before the failure is armed
  g_failed = false;
  g_allocations_left = n > 0 ? n : -1;
  Result<std::unique_ptr<Session>> session = invalid_argument("not loaded");
  try {
    session = Session::load(model, options);
    if (session.is_ok()) run = runner(*session.value(), inputs);
  } catch (const std::bad_alloc&) {
    g_allocations_left = -1;
    ADD_FAILURE() << "n=" << n << ": std::bad_alloc escaped from Kiln";
  }
  g_allocations_left = -1;
  Trial t;
  t.failed = g_failed;
  t.load = session.status();
  if (!session.is_ok()) return t;
  t.run = run.status();
  if (run.is_ok()) t.outputs = std::move(run).value();
  Result<std::map<std::string, Tensor>> rerun = runner(*session.value(), inputs);
  t.rerun = rerun.status();
  if (rerun.is_ok()) t.rerun_outputs = std::move(rerun).value();
  return t;
}

bool same(const std::map<std::string, Tensor>& a, const std::map<std::string, Tensor>& b) {
  if (a.size() != b.size()) return false;
  for (const auto& [name, t] : a) {
    const auto other = b.find(name);
    if (other == b.end() || other->second.shape() != t.shape() || other->second.dtype() != t.dtype() ||
        std::memcmp(other->second.raw_data(), t.raw_data(), t.byte_size()) != 0)
      return false;
  }
  return true;
}

// Every N from 1 until the load and run need fewer than N allocations.
void fail_each_allocation_in_turn(const std::string& model, const SessionOptions& options, Runner runner = run_once) {
  const std::map<std::string, Tensor> inputs = {{"x", random_tensor(DType::kFloat, {3, 8}, 7)}};
  const Trial clean = trial(model, options, runner, inputs, 0);
  ASSERT_TRUE(clean.load.is_ok() && clean.run.is_ok()) << clean.load.to_string() << " " << clean.run.to_string();
  int64_t load_failures = 0, run_failures = 0, absorbed = 0;
  int64_t n = 1;
  for (;; ++n) {
    const Trial t = trial(model, options, runner, inputs, n);
    if (!t.failed) {  // past the last allocation of the load and run
      EXPECT_TRUE(t.load.is_ok() && t.run.is_ok() && same(t.outputs, clean.outputs)) << "n=" << n;
      break;
    }
    if (!t.load.is_ok()) {
      ++load_failures;
      EXPECT_EQ(t.load.code(), StatusCode::kAllocationFailure) << "n=" << n << ": " << t.load.to_string();
      continue;
    }
    if (!t.run.is_ok()) {
      ++run_failures;
      EXPECT_EQ(t.run.code(), StatusCode::kAllocationFailure) << "n=" << n << ": " << t.run.to_string();
    } else {
      ++absorbed;  // a cache or an optional copy did without: the answer must still be right
      EXPECT_TRUE(same(t.outputs, clean.outputs)) << "n=" << n << ": a wrong answer after a failed allocation";
    }
    EXPECT_TRUE(t.rerun.is_ok()) << "n=" << n << ": the session did not recover: " << t.rerun.to_string();
    EXPECT_TRUE(same(t.rerun_outputs, clean.outputs)) << "n=" << n << ": a wrong answer on the next run";
  }
  std::printf("allocations in a load and run: %lld (load failed %lld, run failed %lld, absorbed %lld)\n",
              static_cast<long long>(n - 1), static_cast<long long>(load_failures), static_cast<long long>(run_failures),
              static_cast<long long>(absorbed));
  EXPECT_GT(n, 100) << "too few allocations seen: is operator new replaced?";
}

SessionOptions with_mode(ExecutionMode mode, int threads) {
  SessionOptions options;
  options.mode = mode;
  options.threads = threads;
  return options;
}

TEST(AllocationFailures, GraphModeOnOneThread) {
  ScratchDir dir("allocation-failures");
  fail_each_allocation_in_turn(small_model(dir), with_mode(ExecutionMode::kGraph, 1));
}

TEST(AllocationFailures, GraphModeOnTwoThreads) {
  ScratchDir dir("allocation-failures");
  fail_each_allocation_in_turn(small_model(dir), with_mode(ExecutionMode::kGraph, 2));
}

TEST(AllocationFailures, EagerMode) {
  ScratchDir dir("allocation-failures");
  fail_each_allocation_in_turn(small_model(dir), with_mode(ExecutionMode::kEager, 1));
}

TEST(AllocationFailures, AStreamsCall) {
  ScratchDir dir("allocation-failures");
  fail_each_allocation_in_turn(small_model(dir), with_mode(ExecutionMode::kGraph, 1), run_as_stream);
}

// The artifact's path: the file read into memory, its container, manifest, signature and plan.
TEST(AllocationFailures, ASignedArtifact) {
  ScratchDir dir("allocation-failures");
  auto session = Session::load(small_model(dir));
  ASSERT_TRUE(session.is_ok()) << session.status().to_string();
  const std::string artifact = dir.file("small.kiln");
  ASSERT_TRUE(session.value()->write_artifact(artifact).is_ok());
  const artifact::KeyPair keys = artifact::generate_key_pair().value();
  ASSERT_TRUE(io::write_file_atomic(artifact, artifact::sign(io::read_file(artifact).value(), keys.secret_key).value()).is_ok());
  SessionOptions options = with_mode(ExecutionMode::kAot, 1);
  options.artifact_public_key = keys.public_key;
  options.require_signature = true;
  fail_each_allocation_in_turn(artifact, options);
}

}  // namespace
}  // namespace kiln
