// Tests of elementwise_chain_fusion: on IR text, a run of element-wise ops becomes one
// kiln.ElementwiseChain whose attributes list each step, the input holding its operand and whether
// that operand is on the left, with the ops it replaced as origins; a value read twice ends a
// chain; a lone op stays; c - x is not a step (oneDNN's post-ops subtract on the right only); only
// a target that runs chains (PassContext::elementwise_chains) and only nodes its provider owns
// get them. End to end, a chain on cpu computes what the ops compute on cpu_ref.
#include "kiln/passes/elementwise_chain_fusion.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>

#include "kiln/ops/elementwise_chain.h"
#include "kiln/session.h"
#include "passes/pass_test_util.h"
#include "support/model_builder.h"

namespace kiln::passes {
namespace {

using kiln::testing::ModelBuilder;
using kiln::testing::ScratchDir;

PassContext chain_context() {
  PassContext ctx = testing::fake_context();
  ctx.preferences.forms = {ops::GraphForm::kElementwiseChains};
  return ctx;
}

// x[2,3,4] -> Mul(x, 0.5) -> Add(bias[4], .) -> Tanh -> Mul(., gate) -> `tail` -> y, as IR text;
// the graph's outputs as given.
std::string chain_text(const char* tail, const char* outputs = "%y") {
  return std::string(R"(graph main (%x: float[2,3,4], %gate: float[2,3,4]) -> ()") + outputs + R"() {
    %half = constant float[] [0.5]
    %one = constant float[] [1.0]
    %bias = constant float[4] [0.1,-0.2,0.3,-0.4]
    %m: float[2,3,4] = Mul 'scale'(%x, %half)
    %a: float[2,3,4] = Add 'shift'(%bias, %m)
    %t: float[2,3,4] = Tanh 'tanh'(%a)
    %g: float[2,3,4] = Mul 'gate_mul'(%t, %gate)
    )" + tail + R"(
  })";
}

constexpr const char* kRelu = "%y: float[2,3,4] = Relu 'relu'(%g)";
constexpr const char* kOneMinusSigmoid = R"(%s: float[2,3,4] = Sigmoid 'sigmoid'(%g)
    %y: float[2,3,4] = Sub 'one_minus'(%one, %s))";

TEST(ElementwiseChainFusion, ARunOfOpsIsOneChainListingItsSteps) {
  const testing::Rewritten r = testing::rewrite_ir(chain_text(kRelu), fuse_elementwise_chains, chain_context());
  EXPECT_TRUE(r.changed);
  EXPECT_EQ(r.printed,
            "graph main (%x: float[2,3,4], %gate: float[2,3,4]) -> (%y: float[2,3,4]) {\n"
            "  %half = constant float[] [0.5]\n"
            "  %bias = constant float[4] [0.1,-0.2,0.3,-0.4]\n"
            "  %y: float[2,3,4] = kiln.ElementwiseChain 'scale'(%x, %half, %bias, %gate) {alphas=[0.0,0.0,0.0,0.0,0.0], "
            "betas=[0.0,0.0,0.0,0.0,0.0], operand_first=[0,1,0,0,0], operands=[1,2,-1,3,-1], "
            "steps=[\"Mul\",\"Add\",\"Tanh\",\"Mul\",\"Relu\"]}\n"
            "}");
  EXPECT_EQ(testing::origins_of(r, "scale"), (std::vector<std::string>{"scale", "shift", "tanh", "gate_mul", "relu"}));
}

// The steps read back from the attributes compute what the ops compute: 2 * x, then e^., then .^2.
TEST(ElementwiseChainFusion, AnOperandReadTwiceIsOneInput) {
  const testing::Rewritten r = testing::rewrite_ir(R"(graph main (%x: float[4]) -> (%y) {
    %two = constant float[] [2.0]
    %d: float[4] = Mul 'mul'(%two, %x)
    %e: float[4] = Exp 'exp'(%d)
    %y: float[4] = Pow 'pow'(%e, %two)
  })",
                                                   fuse_elementwise_chains, chain_context());
  EXPECT_TRUE(r.changed);
  EXPECT_NE(r.printed.find("%y: float[4] = kiln.ElementwiseChain 'mul'(%x, %two) {alphas=[0.0,0.0,0.0], betas=[0.0,0.0,0.0], "
                           "operand_first=[1,0,0], operands=[1,-1,1], steps=[\"Mul\",\"Exp\",\"Pow\"]}"),
            std::string::npos)
      << r.printed;
  ASSERT_TRUE(r.graph && r.graph->nodes().size() == 1) << r.printed;
  const std::vector<ops::ChainStep> steps = ops::chain_steps(*r.graph->nodes()[0]).value();
  ASSERT_EQ(steps.size(), 3u);
  EXPECT_DOUBLE_EQ(steps[0].apply(4.0, 2.0), 8.0);
  EXPECT_DOUBLE_EQ(steps[1].apply(0.0, 0.0), 1.0);
  EXPECT_DOUBLE_EQ(steps[2].apply(3.0, 2.0), 9.0);  // x ^ 2, not 2 ^ x
}

TEST(ElementwiseChainFusion, AValueReadTwiceEndsTheChain) {
  const testing::Rewritten r = testing::rewrite_ir(chain_text(kRelu, "%y, %t"), fuse_elementwise_chains, chain_context());
  EXPECT_TRUE(r.changed);
  EXPECT_NE(r.printed.find("%t: float[2,3,4] = kiln.ElementwiseChain 'scale'(%x, %half, %bias) {"), std::string::npos) << r.printed;
  EXPECT_NE(r.printed.find("%y: float[2,3,4] = kiln.ElementwiseChain 'gate_mul'(%t, %gate) {"), std::string::npos) << r.printed;
  EXPECT_EQ(testing::origins_of(r, "gate_mul"), (std::vector<std::string>{"gate_mul", "relu"}));
}

TEST(ElementwiseChainFusion, TheLeftHandOperandOfSubEndsTheChain) {
  const testing::Rewritten r = testing::rewrite_ir(chain_text(kOneMinusSigmoid), fuse_elementwise_chains, chain_context());
  EXPECT_TRUE(r.changed);
  EXPECT_NE(r.printed.find("%s: float[2,3,4] = kiln.ElementwiseChain 'scale'(%x, %half, %bias, %gate) {"), std::string::npos)
      << r.printed;
  EXPECT_NE(r.printed.find("steps=[\"Mul\",\"Add\",\"Tanh\",\"Mul\",\"Sigmoid\"]"), std::string::npos) << r.printed;
  EXPECT_NE(r.printed.find("%y: float[2,3,4] = Sub 'one_minus'(%one, %s)\n"), std::string::npos) << r.printed;
}

TEST(ElementwiseChainFusion, ALoneOpStays) {
  const std::string_view lone = R"(graph main (%x: float[4]) -> (%y) {
    %y: float[4] = Exp 'exp'(%x)
  })";
  EXPECT_FALSE(testing::rewrite_ir(lone, fuse_elementwise_chains, chain_context()).changed);
}

TEST(ElementwiseChainFusion, OffUnlessTheTargetRunsChains) {
  EXPECT_FALSE(testing::rewrite_ir(chain_text(kRelu), fuse_elementwise_chains).changed);
}

// Lowering a partitioned graph: the Tanh another provider runs splits the run in two.
TEST(ElementwiseChainFusion, OnlyNodesTheProviderOwnsJoinAChain) {
  PassContext ctx = chain_context();
  ctx.owned = [](const ir::Node& n) { return n.name != "tanh"; };
  const testing::Rewritten r = testing::rewrite_ir(chain_text(kRelu), fuse_elementwise_chains, ctx);
  EXPECT_TRUE(r.changed);
  EXPECT_NE(r.printed.find("%a: float[2,3,4] = kiln.ElementwiseChain 'scale'(%x, %half, %bias) {"), std::string::npos) << r.printed;
  EXPECT_NE(r.printed.find("%t: float[2,3,4] = Tanh 'tanh'(%a)\n"), std::string::npos) << r.printed;
  EXPECT_NE(r.printed.find("%y: float[2,3,4] = kiln.ElementwiseChain 'gate_mul'(%t, %gate) {"), std::string::npos) << r.printed;
}

constexpr int kFloat = onnx::TensorProto::FLOAT;

std::vector<float> wave(size_t n, float scale) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = scale * std::sin(0.7f * static_cast<float>(i) + 0.1f);
  return v;
}

// x[2,3,5] -> Mul(x, 0.5) -> Add(bias[5]) -> Tanh -> Mul(gate[2,3,5]) -> Relu -> y; with
// `one_minus`, y = 1 - Sigmoid(...) instead of the last Relu.
std::string chain_model(const ScratchDir& dir, bool one_minus) {
  ModelBuilder b(13);
  b.input("x", kFloat, {int64_t{2}, int64_t{3}, int64_t{5}});
  b.input("gate", kFloat, {int64_t{2}, int64_t{3}, int64_t{5}});
  b.output("y", kFloat, {int64_t{2}, int64_t{3}, int64_t{5}});
  b.float_initializer("half", {}, {0.5f});
  b.float_initializer("one", {}, {1.0f});
  b.float_initializer("bias", {5}, {0.1f, -0.2f, 0.3f, -0.4f, 0.5f});
  b.node("Mul", {"x", "half"}, {"m"}, "scale");
  b.node("Add", {"bias", "m"}, {"a"}, "shift");  // operand first: Add is commutative
  b.node("Tanh", {"a"}, {"t"}, "tanh");
  b.node("Mul", {"t", "gate"}, {"g"}, "gate_mul");
  if (one_minus) {
    b.node("Sigmoid", {"g"}, {"s"}, "sigmoid");
    b.node("Sub", {"one", "s"}, {"y"}, "one_minus");
  } else {
    b.node("Relu", {"g"}, {"y"}, "relu");
  }
  return b.save(dir.file("model.onnx"));
}

struct Ran {
  Tensor y;
  std::vector<std::string> ops;  // after the passes
};

Ran run(const std::string& model, bool optimize, const std::string& provider, std::vector<std::string> fallback = {}) {
  SessionOptions options;
  options.optimize = optimize;
  options.providers = {provider};
  options.allow_fallback = std::move(fallback);
  auto session = Session::load(model, options);
  EXPECT_TRUE(session.is_ok()) << session.status().to_string();
  if (!session.is_ok()) return {};
  auto out = session.value()->run({{"x", Tensor::from_vector<float>(DType::kFloat, {2, 3, 5}, wave(30, 3.0f))},
                                   {"gate", Tensor::from_vector<float>(DType::kFloat, {2, 3, 5}, wave(30, -1.5f))}});
  EXPECT_TRUE(out.is_ok()) << out.status().to_string();
  Ran ran{out.is_ok() ? out.value().at("y") : Tensor{}, {}};
  const nlohmann::json report = nlohmann::json::parse(session.value()->report_json());
  for (const auto& n : report["partition"]["nodes"]) ran.ops.push_back(n["op"].get<std::string>());
  return ran;
}

void expect_close(const Tensor& a, const Tensor& b, const std::string& label) {
  ASSERT_EQ(a.shape(), b.shape()) << label;
  for (int64_t i = 0; i < a.element_count(); ++i) EXPECT_NEAR(a.data<float>()[i], b.data<float>()[i], 1e-6) << label << " " << i;
}

// The chains below are what the results are computed by.
TEST(ElementwiseChainFusion, AChainOnCpuComputesWhatTheOpsComputeOnTheReference) {
  ScratchDir dir("chain");
  const std::string model = chain_model(dir, false);
  const Ran fused = run(model, true, "cpu");
  EXPECT_EQ(fused.ops, std::vector<std::string>{"ElementwiseChain"});
  expect_close(fused.y, run(model, false, "cpu_ref").y, "cpu");
}

TEST(ElementwiseChainFusion, AChainAndTheSubAfterItComputeWhatTheOpsCompute) {
  ScratchDir dir("chain");
  const std::string model = chain_model(dir, true);
  const Ran fused = run(model, true, "cpu", {"cpu_ref"});
  EXPECT_EQ(fused.ops, (std::vector<std::string>{"ElementwiseChain", "Sub"}));
  expect_close(fused.y, run(model, false, "cpu_ref").y, "1 - sigmoid");
}

}  // namespace
}  // namespace kiln::passes
