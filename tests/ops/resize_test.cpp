// Tests of Resize and Upsample: output-size rules (scales, sizes, unknown operands) and values for
// nearest, linear and cubic modes. Linear/cubic half_pixel values come from
// torch.nn.functional.interpolate(align_corners=False); the rest are hand-computed.
#include <gtest/gtest.h>

#include "ops/rule_harness.h"

namespace kiln::ops {
namespace {

using namespace testing;
const ir::Dim kBatch = ir::Dim::symbol("batch");

TEST(Resize, RuleFromScalesSizesAndUnknowns) {
  Tensor scales = f32({4}, {1, 1, 2, 2});
  EXPECT_EQ(rule_type("Resize", {RuleInput{typed(DType::kFloat, {kBatch, 3, 10, 7})}, std::nullopt, known(scales)}).to_string(),
            "float[batch,3,20,14]");
  Tensor sizes = i64({1, 3, 5, 5});
  EXPECT_EQ(rule_type("Resize", {RuleInput{typed(DType::kFloat, {kBatch, 3, 10, 7})}, std::nullopt, std::nullopt, known(sizes)})
                .to_string(),
            "float[1,3,5,5]");
  EXPECT_EQ(rule_type("Resize", {RuleInput{typed(DType::kFloat, {kBatch, 3, 10, 7})}, std::nullopt,
                                 RuleInput{ir::make_type(DType::kFloat, {4})}})
                .to_string(),
            "float[?,?,?,?]");
  Tensor short_scales = f32({2}, {2, 2});
  EXPECT_NE(rule_error("Resize", {RuleInput{ir::make_type(DType::kFloat, {1, 1, 2, 2})}, std::nullopt, known(short_scales)})
                .find("node_under_test"),
            std::string::npos);
  EXPECT_NE(rule_error("Resize", {RuleInput{ir::make_type(DType::kFloat, {1, 1, 2, 2})}, std::nullopt, known(scales)},
                       {{"mode", str("area")}})
                .find("mode"),
            std::string::npos);
}

TEST(Resize, NearestModes) {
  // [1,2,3] to 5 with asymmetric coordinates: x_in = x * 3/5 = 0, .6, 1.2, 1.8, 2.4.
  Tensor x = f32({3}, {1, 2, 3});
  Tensor sizes = i64({5});
  const Attrs asym = {{"coordinate_transformation_mode", str("asymmetric")}};
  EXPECT_EQ(elements<float>(eval("Resize", {&x, nullptr, nullptr, &sizes}, asym)[0]), (std::vector<float>{1, 2, 2, 3, 3}));
  Attrs floor = asym;
  floor["nearest_mode"] = str("floor");
  EXPECT_EQ(elements<float>(eval("Resize", {&x, nullptr, nullptr, &sizes}, floor)[0]), (std::vector<float>{1, 1, 2, 2, 3}));
  // Upsample-9 (floor, asymmetric) by 2: each element twice.
  Tensor two = f32({1}, {2});
  EXPECT_EQ(elements<float>(eval("Upsample", {&x, &two}, {}, 9)[0]), (std::vector<float>{1, 1, 2, 2, 3, 3}));
  EXPECT_EQ(elements<float>(eval("Upsample", {&x}, {{"scales", ir::Attribute::of_floats({2})}}, 7)[0]),
            (std::vector<float>{1, 1, 2, 2, 3, 3}));
}

TEST(Resize, LinearAndCubicHalfPixel) {
  Tensor x = f32({1, 1, 2}, {1, 2});
  Tensor scales = f32({3}, {1, 1, 2});
  EXPECT_EQ(elements<float>(eval("Resize", {&x, nullptr, &scales}, {{"mode", str("linear")}})[0]),
            (std::vector<float>{1, 1.25f, 1.75f, 2}));
  // torch bicubic (a = -0.75) of [[1,2],[3,4]] upscaled by 2.
  Tensor sq = f32({1, 1, 2, 2}, {1, 2, 3, 4});
  Tensor s2 = f32({4}, {1, 1, 2, 2});
  expect_near_all(elements<float>(eval("Resize", {&sq, nullptr, &s2}, {{"mode", str("cubic")}})[0]),
                  {0.68359375f, 1.015625f, 1.5625f, 1.89453125f, 1.34765625f, 1.6796875f, 2.2265625f, 2.55859375f,
                   2.44140625f, 2.7734375f, 3.3203125f, 3.65234375f, 3.10546875f, 3.4375f, 3.984375f, 4.31640625f});
}

TEST(Resize, AlignCornersAndCropAndResize) {
  // align_corners [1,2] to 3: x_in = 0, 0.5, 1 -> [1, 1.5, 2]
  Tensor x = f32({2}, {1, 2});
  Tensor sizes = i64({3});
  EXPECT_EQ(elements<float>(eval("Resize", {&x, nullptr, nullptr, &sizes},
                                 {{"mode", str("linear")}, {"coordinate_transformation_mode", str("align_corners")}})[0]),
            (std::vector<float>{1, 1.5f, 2}));
  // tf_crop_and_resize with roi [0.5, 1.5] on [1,2] to 3: x_in = 0.5, 1.0, 1.5 -> [1.5, 2, extrapolated 9]
  Tensor roi = f32({2}, {0.5f, 1.5f});
  EXPECT_EQ(elements<float>(eval("Resize", {&x, &roi, nullptr, &sizes},
                                 {{"mode", str("linear")}, {"coordinate_transformation_mode", str("tf_crop_and_resize")},
                                  {"extrapolation_value", ir::Attribute::of_float(9)}})[0]),
            (std::vector<float>{1.5f, 2, 9}));
}

}  // namespace
}  // namespace kiln::ops
