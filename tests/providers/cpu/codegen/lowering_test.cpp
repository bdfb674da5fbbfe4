// Tests of lowering to loop IR: element-wise chains (operand order, unsupported steps named),
// Softmax, LayerNormalization and Reduce* as row reductions, and the forms left to library kernels.
#include "kiln/providers/cpu/codegen/lowering.h"

#include <gtest/gtest.h>

#include "kiln/ops/elementwise_chain.h"

namespace kiln::codegen {
namespace {

using Dims = std::vector<int64_t>;

ir::Node chain_node(const std::vector<ops::ChainStep>& steps) {
  ir::Node n;
  n.name = "chain";
  n.op_type = "ElementwiseChain";
  n.domain = "kiln";
  ops::set_chain_steps(n, steps);
  return n;
}

TEST(Lowering, ChainsLowerStepByStepWithOperandsOnTheirSide) {
  ops::ChainStep sub{ops::Elementwise::kSub};
  sub.operand = 1;
  sub.operand_first = true;  // c - x
  ops::ChainStep clip{ops::Elementwise::kClip, 0.0f, 6.0f};
  const Result<LoopKernel> k = lower_elementwise_chain(chain_node({sub, clip}), {{3, 8}, {8}}, {3, 8});
  ASSERT_TRUE(k.is_ok()) << k.status().to_string();
  ASSERT_EQ(k->body.size(), 4u);  // load x, load c, Sub(c, x), Clip
  EXPECT_EQ(k->body[2].function, ops::Elementwise::kSub);
  EXPECT_EQ(k->body[2].lhs, 1);
  EXPECT_EQ(k->body[2].rhs, 0);
  EXPECT_EQ(k->body[3].function, ops::Elementwise::kClip);
  EXPECT_EQ(k->body[3].beta, 6.0f);
  EXPECT_NE(k->to_string().find("Clip(v2)"), std::string::npos) << k->to_string();
}

TEST(Lowering, AStepThatIsNoChainStepIsRefusedByName) {
  const Result<LoopKernel> k = lower_elementwise_chain(chain_node({ops::ChainStep{ops::Elementwise::kGelu}}), {{4}}, {4});
  ASSERT_FALSE(k.is_ok());
  EXPECT_EQ(k.status().code(), StatusCode::kInvalidModel);
  EXPECT_NE(k.status().message().find("Gelu"), std::string::npos);
  EXPECT_NE(k.status().message().find("chain"), std::string::npos);
}

ir::Node node(const std::string& op, int opset) {
  ir::Node n;
  n.name = "n";
  n.op_type = op;
  n.opset_version = opset;
  return n;
}

size_t reductions(const LoopKernel& k) {
  size_t n = 0;
  for (const Instruction& in : k.body) n += in.kind == Instruction::Kind::kReduce;
  return n;
}

TEST(Lowering, SoftmaxIsAMaxThenASumOverEachRow) {
  const Result<LoopKernel> k = lower_softmax(node("Softmax", 13), {2, 3, 19});
  ASSERT_TRUE(k.is_ok()) << k.status().to_string();
  EXPECT_EQ(k->extents, (Dims{6, 19}));
  EXPECT_EQ(reductions(*k), 2u);
  EXPECT_EQ(k->body.back().function, ops::Elementwise::kDiv);
  // Before opset 13 the dims from `axis` on are one row.
  ir::Node old = node("LogSoftmax", 11);
  old.attributes["axis"] = ir::Attribute::of_int(1);
  const Result<LoopKernel> flat = lower_softmax(old, {2, 3, 5});
  ASSERT_TRUE(flat.is_ok());
  EXPECT_EQ(flat->extents, (Dims{2, 15}));
  EXPECT_EQ(flat->body.back().function, ops::Elementwise::kSub);
}

TEST(Lowering, SoftmaxOverAnInnerAxisIsLeftToTheLibrary) {
  ir::Node inner = node("Softmax", 13);
  inner.attributes["axis"] = ir::Attribute::of_int(1);
  const Result<LoopKernel> k = lower_softmax(inner, {2, 3, 19});
  ASSERT_FALSE(k.is_ok());
  EXPECT_EQ(k.status().code(), StatusCode::kUnsupportedOperator);
}

TEST(Lowering, LayerNormalizationReadsScaleAndBiasAsSharedRows) {
  ir::Node ln = node("LayerNormalization", 17);
  ln.attributes["axis"] = ir::Attribute::of_int(-2);
  const Result<LoopKernel> k = lower_layer_norm(ln, {{4, 3, 7}, {3, 7}, {21}});
  ASSERT_TRUE(k.is_ok()) << k.status().to_string();
  EXPECT_EQ(k->extents, (Dims{4, 21}));
  EXPECT_EQ(k->strides, (std::vector<Dims>{{21, 1}, {0, 1}, {0, 1}}));
  EXPECT_EQ(reductions(*k), 2u);
  EXPECT_EQ(k->body.back().function, ops::Elementwise::kAdd);
  const Result<LoopKernel> bad = lower_layer_norm(ln, {{4, 3, 7}, {7}});
  ASSERT_FALSE(bad.is_ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kUnsupportedOperator);
}

TEST(Lowering, ReductionsOverTheInnermostDimsAreOneRowPerOutputElement) {
  ir::Node mean = node("ReduceMean", 13);
  mean.attributes["axes"] = ir::Attribute::of_ints({2, -1});
  const Result<LoopKernel> k = lower_reduction(mean, {2, 3, 4, 5}, nullptr);
  ASSERT_TRUE(k.is_ok()) << k.status().to_string();
  EXPECT_EQ(k->extents, (Dims{6, 20}));
  EXPECT_EQ(reductions(*k), 1u);
  EXPECT_EQ(k->body.back().function, ops::Elementwise::kMul);  // by 1/20
  EXPECT_TRUE(k->stores_per_row());
  EXPECT_NE(k->to_string().find("store v3 per row"), std::string::npos) << k->to_string();
  // Size-1 dims among the reduced ones do not break the row; every axis reduced is one row.
  ir::Node l2 = node("ReduceL2", 13);
  l2.attributes["axes"] = ir::Attribute::of_ints({0, 2});
  const Result<LoopKernel> whole = lower_reduction(l2, {7, 1, 3}, nullptr);
  ASSERT_TRUE(whole.is_ok()) << whole.status().to_string();
  EXPECT_EQ(whole->extents, (Dims{1, 21}));
  EXPECT_EQ(whole->body.back().function, ops::Elementwise::kSqrt);
  // ReduceSum from opset 13 reads its axes from input 1.
  ir::Node sum = node("ReduceSum", 13);
  const Tensor axes = Tensor::from_vector<int64_t>(DType::kInt64, {1}, {-1});
  const Result<LoopKernel> summed = lower_reduction(sum, {4, 9}, &axes);
  ASSERT_TRUE(summed.is_ok()) << summed.status().to_string();
  EXPECT_EQ(summed->extents, (Dims{4, 9}));
  EXPECT_EQ(summed->body.back().fold, Instruction::Fold::kSum);
}

TEST(Lowering, OtherReductionsAreLeftToTheLibrary) {
  ir::Node middle = node("ReduceMax", 13);
  middle.attributes["axes"] = ir::Attribute::of_ints({1});
  for (const Dims& x : {Dims{2, 3, 4}, Dims{2, 1, 4}}) {  // a kept dim inside; nothing to fold
    const Result<LoopKernel> k = lower_reduction(middle, x, nullptr);
    ASSERT_FALSE(k.is_ok());
    EXPECT_EQ(k.status().code(), StatusCode::kUnsupportedOperator) << k.status().to_string();
  }
  for (const char* op : {"ReduceLogSumExp", "ReduceMax", "ReduceMin"})  // a NaN must win in these
    EXPECT_EQ(lower_reduction(node(op, 13), {2, 3}, nullptr).status().code(), StatusCode::kUnsupportedOperator) << op;
  ir::Node repeated = node("ReduceMean", 13);
  repeated.attributes["axes"] = ir::Attribute::of_ints({1, -1});
  const Result<LoopKernel> bad = lower_reduction(repeated, {2, 3}, nullptr);
  ASSERT_FALSE(bad.is_ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidModel);
  EXPECT_NE(bad.status().message().find("repeated"), std::string::npos) << bad.status().to_string();
}

}  // namespace
}  // namespace kiln::codegen
