// Tests of kiln.RMSNormalization (ONNX's RMSNormalization-23): values against the formula
// written out here, the axis, scale broadcasting, and the refusals.
#include "ops/family_test_util.h"

namespace kiln::ops::testing {
namespace {

TEST(RMSNormalization, NormalizesTheLastAxisAndScales) {
  const Tensor x = floats({2, 3}, {1, 2, 3, -4, 0, 4});
  const Tensor scale = floats({3}, {1, 0.5f, 2});
  auto out = run_kiln("RMSNormalization", {&x, &scale}, {{"epsilon", ir::Attribute::of_float(1e-5f)}});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  std::vector<double> want;
  const std::vector<double> xs = {1, 2, 3, -4, 0, 4}, ws = {1, 0.5, 2};
  for (int r = 0; r < 2; ++r) {
    double squares = 0;
    for (int i = 0; i < 3; ++i) squares += xs[r * 3 + i] * xs[r * 3 + i];
    const double rms = std::sqrt(squares / 3 + 1e-5);
    for (int i = 0; i < 3; ++i) want.push_back(xs[r * 3 + i] / rms * ws[i]);
  }
  expect_near(out.value()[0], want, {2, 3});
}

TEST(RMSNormalization, AxisCoversTheTrailingDimsAndScaleBroadcasts) {
  // axis 1 of [1, 2, 2]: one row of 4 values; scale [2, 1] broadcasts over the last dim.
  const Tensor x = floats({1, 2, 2}, {1, 1, 1, 1});
  const Tensor scale = floats({2, 1}, {2, 3});
  auto out = run_kiln("RMSNormalization", {&x, &scale}, {{"axis", ir::Attribute::of_int(1)}, {"epsilon", ir::Attribute::of_float(0)}});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  expect_near(out.value()[0], {2, 2, 3, 3}, {1, 2, 2});
}

TEST(RMSNormalization, RefusesAScaleThatDoesNotBroadcast) {
  const Tensor x = floats({2, 3}, {1, 2, 3, 4, 5, 6});
  const Tensor scale = floats({2}, {1, 1});
  auto out = run_kiln("RMSNormalization", {&x, &scale});
  ASSERT_FALSE(out.is_ok());
  EXPECT_EQ(out.status().code(), StatusCode::kInvalidModel);
  EXPECT_NE(out.status().message().find("scale"), std::string::npos) << out.status().message();
  const Tensor double_scale = typed<double>(DType::kDouble, {3}, {1, 1, 1});
  EXPECT_FALSE(run_kiln("RMSNormalization", {&x, &double_scale}).is_ok());  // scale must have X's type
}

}  // namespace
}  // namespace kiln::ops::testing
