// Concurrent runs of one session (run_lanes.h): many threads with mixed shapes get exactly the
// serial results, in graph and jit modes and with one lane; RunOptions' terminate ends a run with
// a Cancelled status naming the node and the run's tag, and the session runs on afterwards.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <cstring>
#include <thread>

#include "kiln/session.h"
#include "support/model_builder.h"

namespace kiln {
namespace {

using testing::ModelBuilder;
constexpr int kFloat = onnx::TensorProto::FLOAT;

// x: float[N, 4, 8, 8] -> Conv 3x3 (8 channels) -> Relu -> GlobalAveragePool -> Flatten -> Gemm
// (8 -> 5) -> Softmax: kernels with per-run state (oneDNN's argument maps, scratchpads).
std::string conv_model(const testing::ScratchDir& dir) {
  ModelBuilder b;
  b.input("x", kFloat, {std::string("N"), int64_t{4}, int64_t{8}, int64_t{8}});
  b.output("y", kFloat, {std::string("N"), int64_t{5}});
  std::vector<float> w(8 * 4 * 3 * 3), g(5 * 8);
  for (size_t i = 0; i < w.size(); ++i) w[i] = 0.05f * static_cast<float>(static_cast<int>(i % 17) - 8);
  for (size_t i = 0; i < g.size(); ++i) g[i] = 0.1f * static_cast<float>(static_cast<int>(i % 7) - 3);
  b.float_initializer("w", {8, 4, 3, 3}, w);
  b.float_initializer("g", {5, 8}, g);
  b.float_initializer("c", {5}, {0.1f, -0.2f, 0.3f, -0.4f, 0.5f});
  onnx::NodeProto& conv = b.node("Conv", {"x", "w"}, {"conv"}, "conv");
  b.ints_attribute(conv, "pads", {1, 1, 1, 1});
  b.node("Relu", {"conv"}, {"relu"}, "relu");
  b.node("GlobalAveragePool", {"relu"}, {"pool"}, "pool");
  b.node("Flatten", {"pool"}, {"flat"}, "flatten");
  onnx::NodeProto& gemm = b.node("Gemm", {"flat", "g", "c"}, {"logits"}, "gemm");
  b.int_attribute(gemm, "transB", 1);
  b.node("Softmax", {"logits"}, {"y"}, "softmax");
  return b.save(dir.file("conv.onnx"));
}

Tensor y_of(Session& session, const Tensor& x) {
  auto out = session.run({{"x", x}});
  EXPECT_TRUE(out.is_ok()) << out.status().to_string();
  return out.is_ok() ? out.value().at("y") : Tensor();
}

bool same(const Tensor& a, const Tensor& b) {
  return a.shape() == b.shape() && a.byte_size() == b.byte_size() && std::memcmp(a.raw_data(), b.raw_data(), a.byte_size()) == 0;
}

void expect_concurrent_runs_match_serial(ExecutionMode mode, int max_concurrent_runs) {
  testing::ScratchDir dir("concurrent");
  SessionOptions options;
  options.mode = mode;
  options.max_concurrent_runs = max_concurrent_runs;
  auto session = Session::load(conv_model(dir), options);
  ASSERT_TRUE(session.is_ok()) << session.status().to_string();
  std::vector<Tensor> xs, serial;
  for (int64_t n = 1; n <= 4; ++n) xs.push_back(random_tensor(DType::kFloat, {n, 4, 8, 8}, static_cast<uint64_t>(n)));
  for (const Tensor& x : xs) serial.push_back(y_of(*session.value(), x));
  constexpr int kThreads = 8, kRuns = 200;
  std::vector<int> mismatches(kThreads, 0), failures(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int r = 0; r < kRuns; ++r) {
        const size_t which = static_cast<size_t>(t + r) % xs.size();
        auto out = session.value()->run({{"x", xs[which]}});
        if (!out.is_ok()) {
          ++failures[t];
          continue;
        }
        if (!same(out.value().at("y"), serial[which])) ++mismatches[t];
      }
    });
  for (std::thread& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(failures[t], 0) << "thread " << t;
    EXPECT_EQ(mismatches[t], 0) << "thread " << t;
  }
  const nlohmann::json e = nlohmann::json::parse(session.value()->report_json())["execution"];
  EXPECT_EQ(e["max_concurrent_runs"], max_concurrent_runs);
  EXPECT_GE(e["lanes"].get<int>(), 1);
  EXPECT_LE(e["lanes"].get<int>(), max_concurrent_runs);
  EXPECT_EQ(nlohmann::json::parse(session.value()->report_json())["run"]["runs"].get<int>(), 4 + kThreads * kRuns);
}

TEST(ConcurrentRuns, EightThreadsWithMixedShapesGetTheSerialResults) {
  expect_concurrent_runs_match_serial(ExecutionMode::kGraph, 4);
}

TEST(ConcurrentRuns, JitVariantsAreBuiltPerLaneAndMatch) { expect_concurrent_runs_match_serial(ExecutionMode::kJit, 3); }

TEST(ConcurrentRuns, OneLaneSerialisesTheRuns) { expect_concurrent_runs_match_serial(ExecutionMode::kGraph, 1); }

TEST(ConcurrentRuns, TerminateEndsTheRunWithCancelledAndTheSessionRunsOn) {
  testing::ScratchDir dir("concurrent");
  auto session = Session::load(conv_model(dir));
  ASSERT_TRUE(session.is_ok());
  const Tensor x = random_tensor(DType::kFloat, {2, 4, 8, 8}, 9);
  const Tensor expected = y_of(*session.value(), x);
  RunOptions run_options;
  run_options.tag = "request-17";
  run_options.terminate = true;
  auto cancelled = session.value()->run({{"x", x}}, run_options);
  ASSERT_FALSE(cancelled.is_ok());
  EXPECT_EQ(cancelled.status().code(), StatusCode::kCancelled);
  EXPECT_NE(cancelled.status().message().find("request-17"), std::string::npos) << cancelled.status().message();
  EXPECT_NE(cancelled.status().message().find("terminated before"), std::string::npos) << cancelled.status().message();
  run_options.terminate = false;
  run_options.threads = 1;
  auto again = session.value()->run({{"x", x}}, run_options);
  ASSERT_TRUE(again.is_ok()) << again.status().to_string();
  EXPECT_TRUE(same(again.value().at("y"), expected));
  EXPECT_TRUE(same(y_of(*session.value(), x), expected));
}

TEST(ConcurrentRuns, AZeroBoundIsRefused) {
  testing::ScratchDir dir("concurrent");
  SessionOptions options;
  options.max_concurrent_runs = 0;
  EXPECT_EQ(Session::load(conv_model(dir), options).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace kiln
