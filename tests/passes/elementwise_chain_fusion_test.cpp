// Tests of elementwise_chain_fusion: a run of element-wise ops becomes one kiln.ElementwiseChain
// (built for the cpu provider) that computes what the ops computed on cpu_ref; a value read twice ends a chain; a
// lone op stays; c - x is not a step (oneDNN's post-ops subtract on the right only).
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

constexpr int kFloat = onnx::TensorProto::FLOAT;

std::vector<float> wave(size_t n, float scale) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = scale * std::sin(0.7f * static_cast<float>(i) + 0.1f);
  return v;
}

// x[2,3,5] -> Mul(x, 0.5) -> Add(bias[5]) -> Tanh -> Mul(gate[2,3,5]) -> Relu -> y; with
// `one_minus`, y = 1 - Sigmoid(...) instead of the last Relu. `tap` also outputs the Tanh.
std::string chain_model(const ScratchDir& dir, bool one_minus, bool tap) {
  ModelBuilder b(13);
  b.input("x", kFloat, {int64_t{2}, int64_t{3}, int64_t{5}});
  b.input("gate", kFloat, {int64_t{2}, int64_t{3}, int64_t{5}});
  b.output("y", kFloat, {int64_t{2}, int64_t{3}, int64_t{5}});
  if (tap) b.output("t", kFloat, {int64_t{2}, int64_t{3}, int64_t{5}});
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

PassContext chain_context() {
  PassContext ctx = testing::fake_context();
  ctx.elementwise_chains = true;
  return ctx;
}

void expect_close(const Tensor& a, const Tensor& b, const std::string& label) {
  ASSERT_EQ(a.shape(), b.shape()) << label;
  for (int64_t i = 0; i < a.element_count(); ++i) EXPECT_NEAR(a.data<float>()[i], b.data<float>()[i], 1e-6) << label << " " << i;
}

TEST(ElementwiseChainFusion, RunOfOpsBecomesOneChainWithTheSameResults) {
  ScratchDir dir("chain");
  const std::string model = chain_model(dir, false, false);
  const Ran plain = run(model, false, "cpu_ref");
  const Ran fused = run(model, true, "cpu");
  EXPECT_EQ(fused.ops, std::vector<std::string>{"ElementwiseChain"});
  expect_close(fused.y, plain.y, "cpu");
}

TEST(ElementwiseChainFusion, LeftHandOperandOfSubEndsTheChain) {
  ScratchDir dir("chain");
  const std::string model = chain_model(dir, true, false);
  const Ran fused = run(model, true, "cpu", {"cpu_ref"}), plain = run(model, false, "cpu_ref");
  EXPECT_EQ(fused.ops, (std::vector<std::string>{"ElementwiseChain", "Sub"}));
  expect_close(fused.y, plain.y, "1 - sigmoid");
}

TEST(ElementwiseChainFusion, ValueReadTwiceEndsTheChain) {
  ScratchDir dir("chain");
  const Ran fused = run(chain_model(dir, false, true), true, "cpu");
  EXPECT_EQ(fused.ops, (std::vector<std::string>{"ElementwiseChain", "ElementwiseChain"}));  // up to Tanh, then on
}

TEST(ElementwiseChainFusion, StepsRecordOperandsAndOrigins) {
  ir::Graph g;
  ir::Value* x = testing::add_input(g, "x", ir::make_type(DType::kFloat, {4}));
  ir::Value* two = g.add_constant("two", Tensor::from_vector<float>(DType::kFloat, {}, {2.0f}));
  ir::Value* d = g.add_value("d", ir::make_type(DType::kFloat, {4}));
  ir::Value* e = g.add_value("e", ir::make_type(DType::kFloat, {4}));
  ir::Value* y = g.add_value("y", ir::make_type(DType::kFloat, {4}));
  g.add_node("Mul", {two, x}, {d}, "mul", "", 14);
  g.add_node("Exp", {d}, {e}, "exp", "", 13);
  g.add_node("Pow", {e, two}, {y}, "pow", "", 15);
  g.outputs = {y};
  ASSERT_TRUE(testing::changed_ok(fuse_elementwise_chains(g, chain_context())));
  ASSERT_EQ(g.nodes().size(), 1u);
  const ir::Node& chain = *g.nodes()[0];
  EXPECT_EQ(chain.domain + "." + chain.op_type, "kiln.ElementwiseChain");
  EXPECT_EQ(chain.inputs, (std::vector<ir::Value*>{x, two}));
  EXPECT_EQ(chain.outputs[0], y);
  EXPECT_EQ(chain.source_nodes(), (std::vector<std::string>{"mul", "exp", "pow"}));
  const std::vector<ops::ChainStep> steps = ops::chain_steps(chain);
  ASSERT_EQ(steps.size(), 3u);
  EXPECT_TRUE(steps[0].operand_first);
  EXPECT_EQ(steps[0].operand, 1);
  EXPECT_FALSE(steps[1].is_binary());
  EXPECT_EQ(steps[2].operand, 1);
  EXPECT_FALSE(steps[2].operand_first);
  EXPECT_DOUBLE_EQ(steps[0].apply(4.0, 2.0), 8.0);
  EXPECT_DOUBLE_EQ(steps[2].apply(3.0, 2.0), 9.0);  // x ^ 2
}

TEST(ElementwiseChainFusion, LoneOpStays) {
  ir::Graph g;
  ir::Value* x = testing::add_input(g, "x", ir::make_type(DType::kFloat, {4}));
  ir::Value* y = g.add_value("y", ir::make_type(DType::kFloat, {4}));
  g.add_node("Exp", {x}, {y}, "exp", "", 13);
  g.outputs = {y};
  auto changed = fuse_elementwise_chains(g, chain_context());
  ASSERT_TRUE(changed.is_ok());
  EXPECT_FALSE(changed.value());
}

}  // namespace
}  // namespace kiln::passes
