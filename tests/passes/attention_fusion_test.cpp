// Tests of attention_fusion: the exported attention chain (with a Where mask, or an additive bias
// and a scale on Q) becomes one kiln.Attention with the right inputs and attributes and computes
// the same values; a chain whose scores something else reads is left alone.
#include "kiln/passes/attention_fusion.h"

#include <gtest/gtest.h>

#include "kiln/ops/evaluate.h"
#include "kiln/ops/op_registry.h"

namespace kiln::passes {
namespace {

struct Chain {
  ir::Graph g;
  ir::Value *q, *kt, *v, *mask, *scores, *y;
};

// Q[2,4,3] x Kt[2,3,4] / 2 -> Where(mask, -1e9, .) -> Softmax -> x V[2,4,5]
void build(Chain& c, bool scores_is_output) {
  ir::Graph& g = c.g;
  c.q = g.add_value("q", ir::make_type(DType::kFloat, {2, 4, 3}));
  c.kt = g.add_value("kt", ir::make_type(DType::kFloat, {2, 3, 4}));
  c.v = g.add_value("v", ir::make_type(DType::kFloat, {2, 4, 5}));
  c.mask = g.add_value("mask", ir::make_type(DType::kBool, {2, 1, 4}));
  ir::Value* two = g.add_constant("two", Tensor::from_vector<float>(DType::kFloat, {}, {2.0f}));
  ir::Value* fill = g.add_constant("fill", Tensor::from_vector<float>(DType::kFloat, {}, {-1e9f}));
  c.scores = g.add_value("scores", ir::make_type(DType::kFloat, {2, 4, 4}));
  ir::Value* scaled = g.add_value("scaled", ir::make_type(DType::kFloat, {2, 4, 4}));
  ir::Value* masked = g.add_value("masked", ir::make_type(DType::kFloat, {2, 4, 4}));
  ir::Value* p = g.add_value("p", ir::make_type(DType::kFloat, {2, 4, 4}));
  c.y = g.add_value("y", ir::make_type(DType::kFloat, {2, 4, 5}));
  g.inputs = {c.q, c.kt, c.v, c.mask};
  g.add_node("MatMul", {c.q, c.kt}, {c.scores}, "qk", "", 13);
  g.add_node("Div", {c.scores, two}, {scaled}, "scale", "", 14);
  g.add_node("Where", {c.mask, fill, scaled}, {masked}, "mask", "", 16);
  g.add_node("Softmax", {masked}, {p}, "softmax", "", 13);
  g.add_node("MatMul", {p, c.v}, {c.y}, "pv", "", 13);
  g.outputs = {c.y};
  if (scores_is_output) g.outputs.push_back(c.scores);
}

TEST(AttentionFusion, MaskedScaledChainBecomesOneAttention) {
  Chain c;
  build(c, false);
  ops::OpRegistry registry;
  auto changed = fuse_attention(c.g, PassContext{registry});
  ASSERT_TRUE(changed.is_ok() && changed.value());
  ASSERT_EQ(c.g.nodes().size(), 1u);
  const ir::Node& a = *c.g.nodes()[0];
  EXPECT_EQ(a.domain + "." + a.op_type, "kiln.Attention");
  EXPECT_EQ(a.inputs, (std::vector<ir::Value*>{c.q, c.kt, c.v, c.mask}));
  EXPECT_EQ(a.outputs[0], c.y);
  EXPECT_FLOAT_EQ(a.attr_float("scale", 0), 0.5f);
  EXPECT_FLOAT_EQ(a.attr_float("mask_fill", 0), -1e9f);
  EXPECT_EQ(a.source_nodes(), (std::vector<std::string>{"mask", "scale", "qk", "softmax", "pv"}));
}

TEST(AttentionFusion, FusedNodeComputesWhatTheChainComputes) {
  Chain c;
  build(c, false);
  std::vector<Tensor> inputs{random_tensor(DType::kFloat, {2, 4, 3}, 1), random_tensor(DType::kFloat, {2, 3, 4}, 2),
                             random_tensor(DType::kFloat, {2, 4, 5}, 3),
                             Tensor::from_vector<bool>(DType::kBool, {2, 1, 4}, {false, true, false, false, true, true, false, false})};
  // The chain, op by op.
  std::map<const ir::Value*, Tensor> values{{c.q, inputs[0]}, {c.kt, inputs[1]}, {c.v, inputs[2]}, {c.mask, inputs[3]}};
  for (const auto& n : c.g.nodes()) {
    std::vector<const Tensor*> in;
    for (const ir::Value* v : n->inputs) in.push_back(v->initializer ? &*v->initializer : &values.at(v));
    auto def = ops::resolve_op(ops::OpRegistry::global(), *n);
    ASSERT_TRUE(def.is_ok());
    auto out = ops::evaluate_node(*def.value(), *n, in);
    ASSERT_TRUE(out.is_ok()) << out.status().to_string();
    values[n->outputs[0]] = out.value()[0];
  }
  const Tensor want = values.at(c.y);
  ops::OpRegistry registry;
  ASSERT_TRUE(fuse_attention(c.g, PassContext{registry}).is_ok());
  const ir::Node& a = *c.g.nodes()[0];
  auto def = ops::resolve_op(ops::OpRegistry::global(), a);
  ASSERT_TRUE(def.is_ok()) << def.status().to_string();
  auto got = ops::evaluate_node(*def.value(), a, {&inputs[0], &inputs[1], &inputs[2], &inputs[3]});
  ASSERT_TRUE(got.is_ok()) << got.status().to_string();
  for (int64_t i = 0; i < want.element_count(); ++i) EXPECT_NEAR(got.value()[0].data<float>()[i], want.data<float>()[i], 1e-6) << i;
}

TEST(AttentionFusion, ScoresReadElsewhereStayUnfused) {
  Chain c;
  build(c, true);
  ops::OpRegistry registry;
  auto changed = fuse_attention(c.g, PassContext{registry});
  ASSERT_TRUE(changed.is_ok());
  EXPECT_FALSE(changed.value());
  EXPECT_EQ(c.g.nodes().size(), 5u);
}

}  // namespace
}  // namespace kiln::passes
