// Tests of operator resolution: opsets past the newest Kiln supports are refused, and so is an op
// version whose meaning changed in opsets 18-21 that Kiln has not registered (never run as the
// older version); a registered newer version resolves.
#include "kiln/ops/op_registry.h"

#include <gtest/gtest.h>

#include "ops/family_test_util.h"

namespace kiln::ops {
namespace {

using namespace testing;

TEST(OpRegistry, AChangedVersionKilnLacksIsRefusedNotRunAsTheOlderOne) {
  const Tensor x = floats({1, 1, 2, 2}, {1, 2, 3, 4});
  const Tensor scales = floats({4}, {1, 1, 2, 2});
  const Tensor grid = floats({1, 2, 2, 2}, {0, 0, 0.5f, 0.5f, -0.5f, 0, 1, 1});
  EXPECT_EQ(run_error("GridSample", {&x, &grid}, {}, 19), "");
  const std::string changed = run_error("GridSample", {&x, &grid}, {}, 20);
  EXPECT_NE(changed.find("version 20 is not implemented (Kiln has it up to version 16)"), std::string::npos) << changed;
  EXPECT_EQ(run_error("Resize", {&x, nullptr, &scales}, {}, 19), "");  // Resize-19 is implemented
  EXPECT_NE(run_error("Relu", {&x}, {}, 22).find("newer than Kiln supports (21)"), std::string::npos);
  EXPECT_EQ(run_error("Relu", {&x}, {}, 21), "");  // Relu-14 is the newest Relu
}

}  // namespace
}  // namespace kiln::ops
