// Tests of the execution modes on one small dynamic-batch model: eager runs every original node
// (no rewrites) and shows each value as it is produced; jit compiles a variant per input shape,
// reuses it, and evicts the least recently used beyond max_variants; every mode gives graph mode's
// outputs; weights packed in place stay right for every later plan; modes that do not fit the
// model file are refused; two threads running one session with different shapes get what serial
// runs give.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <thread>

#include "kiln/session.h"
#include "support/model_builder.h"

namespace kiln {
namespace {

using testing::ModelBuilder;
using testing::ScratchDir;
constexpr int kFloat = onnx::TensorProto::FLOAT;

// y[N,3] = Relu(x[N,4] W[4,3] + b)
std::string linear_relu_model(const ScratchDir& dir) {
  ModelBuilder b;
  b.input("x", kFloat, {std::string("N"), int64_t{4}});
  b.output("y", kFloat, {std::string("N"), int64_t{3}});
  b.float_initializer("w", {4, 3}, {0.1f, -0.2f, 0.3f, 0.4f, 0.5f, 0.6f, -0.7f, 0.8f, 0.9f, 1.0f, 1.1f, -1.2f});
  b.float_initializer("b", {3}, {0.5f, -0.5f, 0.25f});
  b.node("MatMul", {"x", "w"}, {"m"}, "matmul");
  b.node("Add", {"m", "b"}, {"s"}, "add");
  b.node("Relu", {"s"}, {"y"}, "relu");
  return b.save(dir.file("linear_relu.onnx"));
}

SessionOptions in_mode(ExecutionMode mode, int max_variants = 8) {
  SessionOptions options;
  options.mode = mode;
  options.max_variants = max_variants;
  return options;
}

nlohmann::json report_of(const Session& session) { return nlohmann::json::parse(session.report_json()); }

// Whether oneDNN ran every kernel on its gemm, which reads weights as they are (its choice for
// these matmuls on AVX2 machines): then nothing is packed.
bool kernels_take_plain_weights(const nlohmann::json& report) {
  for (const auto& [implementation, kernels] : report["target"]["implementations"].items())
    if (implementation.rfind("gemm", 0) != 0) return false;
  return true;
}

Tensor y_of(Session& session, const Tensor& x) {
  auto out = session.run({{"x", x}});
  EXPECT_TRUE(out.is_ok()) << out.status().to_string();
  return out.is_ok() ? out.value().at("y") : Tensor();
}

void expect_close(const Tensor& a, const Tensor& b) {
  ASSERT_EQ(a.shape(), b.shape());
  for (int64_t i = 0; i < a.element_count(); ++i) EXPECT_NEAR(a.data<float>()[i], b.data<float>()[i], 1e-5f) << i;
}

TEST(ExecutionModes, EagerRunsEveryOriginalNodeAndShowsEachValue) {
  ScratchDir dir("modes");
  auto eager = Session::load(linear_relu_model(dir), in_mode(ExecutionMode::kEager));
  auto graph = Session::load(linear_relu_model(dir));
  ASSERT_TRUE(eager.is_ok() && graph.is_ok()) << eager.status().to_string();
  const nlohmann::json report = report_of(*eager.value());
  EXPECT_EQ(report["execution"]["mode"], "eager");
  EXPECT_TRUE(report["passes"].empty()) << "eager does no rewrites";
  EXPECT_EQ(report["partition"]["nodes"].size(), 3u);
  std::vector<std::string> seen;
  const Tensor x = random_tensor(DType::kFloat, {2, 4}, 1);
  auto out = eager.value()->run_observed({{"x", x}}, [&](const std::string& node, const std::string& value, const Tensor& t) {
    seen.push_back(node + ":" + value);
    EXPECT_EQ(t.shape()[0], 2);
  });
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  EXPECT_EQ(seen, (std::vector<std::string>{"matmul:m", "add:s", "relu:y"}));
  expect_close(out.value().at("y"), y_of(*graph.value(), x));
}

TEST(ExecutionModes, JitCompilesAVariantPerShapeAndBoundsThem) {
  ScratchDir dir("modes");
  auto jit = Session::load(linear_relu_model(dir), in_mode(ExecutionMode::kJit, 2));
  auto graph = Session::load(linear_relu_model(dir));
  ASSERT_TRUE(jit.is_ok()) << jit.status().to_string();
  for (int64_t n : {2, 3, 2, 5, 3}) {
    const Tensor x = random_tensor(DType::kFloat, {n, 4}, static_cast<uint64_t>(n));
    expect_close(y_of(*jit.value(), x), y_of(*graph.value(), x));
  }
  const nlohmann::json e = report_of(*jit.value())["execution"];
  EXPECT_EQ(e["mode"], "jit");
  // Kept at most 2: load N=1; 2 (miss); 3 (miss, evicts 1); 2 (hit); 5 (miss, evicts 3); 3 (miss, evicts 2).
  EXPECT_EQ(e["variants_built"], 5);
  EXPECT_EQ(e["cache_hits"], 1);
  EXPECT_EQ(e["cache_misses"], 5);
  EXPECT_EQ(e["evictions"], 3);
  EXPECT_EQ(e["live_variants"], 2);
  EXPECT_EQ(e["recent_variants"].back()["input_shapes"], nlohmann::json::array({nlohmann::json::array({3, 4})}));
  EXPECT_GT(e["compile_ms"].get<double>(), 0.0);
}

TEST(ExecutionModes, VariantsShareTheirPackedWeights) {
  ScratchDir dir("modes");
  for (ExecutionMode mode : {ExecutionMode::kGraph, ExecutionMode::kJit}) {
    auto session = Session::load(linear_relu_model(dir), in_mode(mode));
    ASSERT_TRUE(session.is_ok());
    const int64_t one = report_of(*session.value())["execution"]["packed_weight_bytes"];
    if (one == 0 && kernels_take_plain_weights(report_of(*session.value())))
      GTEST_SKIP() << "oneDNN's matmul reads plain weights on this machine: nothing is packed to share";
    EXPECT_GT(one, 0);
    for (int64_t n : {2, 3, 5}) y_of(*session.value(), random_tensor(DType::kFloat, {n, 4}, 1));
    const nlohmann::json e = report_of(*session.value())["execution"];
    EXPECT_EQ(e["live_variants"], 4);
    EXPECT_EQ(e["packed_weight_bytes"], one) << execution_mode_name(mode) << ": four variants, one packing of w";
  }
}

// y[N,128] = x[N,64] W[64,128]: weights the cpu provider packs into a blocked layout of their size.
std::string wide_matmul_model(const ScratchDir& dir) {
  ModelBuilder b;
  b.input("x", kFloat, {std::string("N"), int64_t{64}});
  b.output("y", kFloat, {std::string("N"), int64_t{128}});
  const Tensor w = random_tensor(DType::kFloat, {64, 128}, 9);
  b.float_initializer("w", {64, 128}, std::vector<float>(w.data<float>(), w.data<float>() + w.element_count()));
  b.node("MatMul", {"x", "w"}, {"y"}, "matmul");
  return b.save(dir.file("wide_matmul.onnx"));
}

TEST(ExecutionModes, WeightsArePackedInPlaceAndEveryLaterPlanStillReadsThemRight) {
  ScratchDir dir("modes");
  const std::string model = wide_matmul_model(dir);
  SessionOptions reference_options;
  reference_options.providers = {"cpu_ref"};
  auto reference = Session::load(model, reference_options);
  ASSERT_TRUE(reference.is_ok());
  for (ExecutionMode mode : {ExecutionMode::kEager, ExecutionMode::kGraph, ExecutionMode::kJit}) {
    auto session = Session::load(model, in_mode(mode, 3));
    ASSERT_TRUE(session.is_ok()) << session.status().to_string();
    // Rows from one (matrix-vector kernels) to many, more shapes than the variants kept.
    for (int64_t n : {1, 2, 7, 33, 128, 1, 7}) {
      const Tensor x = random_tensor(DType::kFloat, {n, 64}, static_cast<uint64_t>(n));
      expect_close(y_of(*session.value(), x), y_of(*reference.value(), x));
    }
    const nlohmann::json report = report_of(*session.value());
    const int64_t packed = kernels_take_plain_weights(report) ? 0 : 64 * 128 * 4;  // read plain: nothing packed
    EXPECT_EQ(report["execution"]["packed_in_place_bytes"], packed) << execution_mode_name(mode) << ": w held once, packed";
  }
  // An artifact written after the packing stores w packed, and runs right.
  auto graph = Session::load(model);
  ASSERT_TRUE(graph.is_ok());
  ASSERT_TRUE(graph.value()->write_artifact(dir.file("wide.kiln")).is_ok());
  auto aot = Session::load(dir.file("wide.kiln"));
  ASSERT_TRUE(aot.is_ok()) << aot.status().to_string();
  const Tensor x = random_tensor(DType::kFloat, {5, 64}, 5);
  expect_close(y_of(*aot.value(), x), y_of(*reference.value(), x));
}

TEST(ExecutionModes, ModesThatDoNotFitTheModelFileAreRefused) {
  ScratchDir dir("modes");
  const std::string model = linear_relu_model(dir);
  EXPECT_EQ(Session::load(model, in_mode(ExecutionMode::kAot)).status().code(), StatusCode::kInvalidArgument);
  auto session = Session::load(model);
  ASSERT_TRUE(session.value()->write_artifact(dir.file("m.kiln")).is_ok());
  auto aot = Session::load(dir.file("m.kiln"));
  ASSERT_TRUE(aot.is_ok());
  EXPECT_EQ(report_of(*aot.value())["execution"]["mode"], "aot");
  const Status jit_artifact = Session::load(dir.file("m.kiln"), in_mode(ExecutionMode::kJit)).status();
  EXPECT_EQ(jit_artifact.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(jit_artifact.message().find("aot"), std::string::npos) << jit_artifact.message();
  SessionOptions jit_specialised = in_mode(ExecutionMode::kJit);
  jit_specialised.specialize = true;
  EXPECT_EQ(Session::load(model, jit_specialised).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(Session::load(model, in_mode(ExecutionMode::kGraph, 0)).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(parse_execution_mode("turbo").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(parse_execution_mode("jit").value(), ExecutionMode::kJit);
}

TEST(ExecutionModes, ConcurrentRunsWithDifferentShapesMatchSerialRuns) {
  ScratchDir dir("modes");
  for (ExecutionMode mode : {ExecutionMode::kGraph, ExecutionMode::kJit}) {
    auto session = Session::load(linear_relu_model(dir), in_mode(mode, 2));
    ASSERT_TRUE(session.is_ok());
    const std::vector<Tensor> xs = {random_tensor(DType::kFloat, {3, 4}, 1), random_tensor(DType::kFloat, {7, 4}, 2),
                                    random_tensor(DType::kFloat, {5, 4}, 3)};
    std::vector<Tensor> serial;
    for (const Tensor& x : xs) serial.push_back(y_of(*session.value(), x));
    std::vector<std::vector<Tensor>> got(2);
    std::vector<std::thread> threads;
    for (size_t t = 0; t < 2; ++t)
      threads.emplace_back([&, t] {
        for (int round = 0; round < 20; ++round)
          for (size_t i = 0; i < xs.size(); ++i) {
            const size_t which = (i + t) % xs.size();
            auto out = session.value()->run({{"x", xs[which]}});
            if (out.is_ok() && round == 19) got[t].push_back(out.value().at("y"));
            if (!out.is_ok()) ADD_FAILURE() << out.status().to_string();
          }
      });
    for (std::thread& th : threads) th.join();
    for (size_t t = 0; t < 2; ++t)
      for (size_t i = 0; i < got[t].size(); ++i) {
        const Tensor& want = serial[(i + t) % xs.size()];
        ASSERT_EQ(got[t][i].shape(), want.shape());
        for (int64_t k = 0; k < want.element_count(); ++k) ASSERT_EQ(got[t][i].data<float>()[k], want.data<float>()[k]);
      }
  }
}

}  // namespace
}  // namespace kiln
