// Tests of collapse_broadcast: adjacent dims merge where every operand is alike along them, size-1
// output dims vanish, and what no merge allows is kept.
#include "kiln/providers/cpu/broadcast_view.h"

#include <gtest/gtest.h>

namespace kiln::providers::cpu {
namespace {

using Dims = std::vector<int64_t>;

TEST(BroadcastView, ALastDimOperandBecomesPerChannel) {
  const BroadcastView v = collapse_broadcast({2, 3, 17}, {{17}, {2, 3, 17}, {}});
  EXPECT_EQ(v.output, (Dims{6, 17}));
  EXPECT_EQ(v.operands[0], (Dims{1, 17}));
  EXPECT_EQ(v.operands[1], (Dims{6, 17}));
  EXPECT_EQ(v.operands[2], (Dims{1, 1}));
}

TEST(BroadcastView, AMiddleBroadcastKeepsItsDims) {
  const BroadcastView v = collapse_broadcast({2, 3, 4, 5}, {{2, 1, 1, 5}});
  EXPECT_EQ(v.output, (Dims{2, 12, 5}));
  EXPECT_EQ(v.operands[0], (Dims{2, 1, 5}));
}

TEST(BroadcastView, SizeOneDimsVanishAndAScalarStaysOne) {
  EXPECT_EQ(collapse_broadcast({1, 8, 1, 4}, {{8, 1, 1}}).output, (Dims{8, 4}));
  EXPECT_EQ(collapse_broadcast({1, 8, 1, 4}, {{8, 1, 1}}).operands[0], (Dims{8, 1}));
  const BroadcastView one = collapse_broadcast({1, 1}, {{1}});
  EXPECT_EQ(one.output, (Dims{1}));
  EXPECT_EQ(one.operands[0], (Dims{1}));
}

}  // namespace
}  // namespace kiln::providers::cpu
