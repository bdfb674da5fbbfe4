// Tests of GridSample: the identity grid reproduces the input (align_corners), bilinear midpoints
// average, and zeros padding reads 0 outside. Values worked out by hand.
#include <gtest/gtest.h>

#include "kiln/ops/evaluate.h"

namespace kiln::ops {
namespace {

using A = ir::Attribute;

TEST(GridSample, IdentityMidpointAndPadding) {
  const Tensor x = Tensor::from_vector<float>(DType::kFloat, {1, 1, 2, 2}, {1, 2, 3, 4});
  // Grid points (x, y): corners (-1,-1) and (1,1), the centre (0,0), and far outside (3,0).
  const Tensor grid = Tensor::from_vector<float>(DType::kFloat, {1, 1, 4, 2}, {-1, -1, 1, 1, 0, 0, 3, 0});
  auto r = evaluate_op("GridSample", {&x, &grid}, {{"align_corners", A::of_int(1)}}, 16);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  const float* y = r.value()[0].data<float>();
  EXPECT_FLOAT_EQ(y[0], 1);
  EXPECT_FLOAT_EQ(y[1], 4);
  EXPECT_FLOAT_EQ(y[2], 2.5f);  // mean of the four pixels
  EXPECT_FLOAT_EQ(y[3], 0);     // outside with zeros padding
  auto border = evaluate_op("GridSample", {&x, &grid}, {{"align_corners", A::of_int(1)}, {"padding_mode", A::of_string("border")}}, 16);
  ASSERT_TRUE(border.is_ok());
  EXPECT_FLOAT_EQ(border.value()[0].data<float>()[3], 3.0f);  // clamped to the right edge, middle row: (2 + 4) / 2
}

}  // namespace
}  // namespace kiln::ops
