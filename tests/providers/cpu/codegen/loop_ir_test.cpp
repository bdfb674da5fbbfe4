// Tests of the loop IR: broadcast strides, merging of dims every input walks alike, row nests for
// reductions.
#include "kiln/providers/cpu/codegen/loop_ir.h"

#include <gtest/gtest.h>

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

TEST(LoopIr, RowNestsKeepTheRowAsTheInnermostLoop) {
  LoopKernel k = row_nest("k", 6, 32, {false, true});
  EXPECT_EQ(k.extents, (Dims{6, 32}));
  EXPECT_EQ(k.strides, (std::vector<Dims>{{32, 1}, {0, 1}}));
  const int x = k.add(Instruction::load(0));
  k.add(Instruction::binary(ops::Elementwise::kDiv, x, k.add(Instruction::reduce(Instruction::Fold::kSum, x))));
  EXPECT_TRUE(k.has_reductions());
  EXPECT_NE(k.to_string().find("ReduceSum over i1 of v0"), std::string::npos) << k.to_string();
}

}  // namespace
}  // namespace kiln::codegen
