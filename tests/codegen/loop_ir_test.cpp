// Tests of the loop IR: broadcast strides, merging of dims every input walks alike, and the
// lowering of element-wise chains (operand order, unsupported steps named).
#include "kiln/codegen/loop_ir.h"

#include <gtest/gtest.h>

#include "kiln/ops/elementwise_chain.h"

namespace kiln::codegen {
namespace {

using Dims = std::vector<int64_t>;

TEST(LoopIr, DenseDimsMergeAndBroadcastDimsStayApart) {
  const LoopKernel k = loop_nest("k", {{2, 3, 4}, {4}}, {2, 3, 4});
  EXPECT_EQ(k.extents, (Dims{6, 4}));
  EXPECT_EQ(k.strides, (std::vector<Dims>{{4, 1}, {0, 1}}));
  EXPECT_EQ(k.element_count(), 24);
}

TEST(LoopIr, SameShapedInputsBecomeOneLoop) {
  const LoopKernel k = loop_nest("k", {{2, 5, 7}, {2, 5, 7}, {}}, {2, 5, 7});
  EXPECT_EQ(k.extents, (Dims{70}));
  EXPECT_EQ(k.strides, (std::vector<Dims>{{1}, {1}, {0}}));
}

TEST(LoopIr, BroadcastsAlongDifferentDimsKeepEveryLoop) {
  const LoopKernel k = loop_nest("k", {{2, 1, 4}, {3, 1}}, {2, 3, 4});
  EXPECT_EQ(k.extents, (Dims{2, 3, 4}));
  EXPECT_EQ(k.strides, (std::vector<Dims>{{4, 0, 1}, {0, 1, 0}}));
}

TEST(LoopIr, SizeOneDimsAreNoLoops) {
  const LoopKernel k = loop_nest("k", {{1, 1, 1}}, {1, 1, 1});
  EXPECT_EQ(k.extents, (Dims{1}));
  const LoopKernel m = loop_nest("m", {{4, 1, 6}, {6}}, {4, 1, 6});
  EXPECT_EQ(m.extents, (Dims{4, 6}));
}

ir::Node chain_node(const std::vector<ops::ChainStep>& steps) {
  ir::Node n;
  n.name = "chain";
  n.op_type = "ElementwiseChain";
  n.domain = "kiln";
  ops::set_chain_steps(n, steps);
  return n;
}

TEST(LoopIr, ChainsLowerStepByStepWithOperandsOnTheirSide) {
  ops::ChainStep sub{"Sub"};
  sub.operand = 1;
  sub.operand_first = true;  // c - x
  ops::ChainStep clip{"Clip", 0.0f, 6.0f};
  const Result<LoopKernel> k = lower_elementwise_chain(chain_node({sub, clip}), "k", {{3, 8}, {8}}, {3, 8});
  ASSERT_TRUE(k.is_ok()) << k.status().to_string();
  ASSERT_EQ(k->body.size(), 4u);  // load x, load c, Sub(c, x), Clip
  EXPECT_EQ(k->body[2].op, "Sub");
  EXPECT_EQ(k->body[2].lhs, 1);
  EXPECT_EQ(k->body[2].rhs, 0);
  EXPECT_EQ(k->body[3].op, "Clip");
  EXPECT_EQ(k->body[3].beta, 6.0f);
  EXPECT_NE(k->to_string().find("Clip(v2)"), std::string::npos) << k->to_string();
}

TEST(LoopIr, AStepWithoutAGeneratedFormIsNamed) {
  const Result<LoopKernel> k = lower_elementwise_chain(chain_node({ops::ChainStep{"Gelu"}}), "k", {{4}}, {4});
  ASSERT_FALSE(k.is_ok());
  EXPECT_EQ(k.status().code(), StatusCode::kUnsupportedOperator);
  EXPECT_NE(k.status().message().find("Gelu"), std::string::npos);
  EXPECT_NE(k.status().message().find("chain"), std::string::npos);
}

}  // namespace
}  // namespace kiln::codegen
