// Tests of GridSample and RoiAlign: shape rules with their errors, and values from
// torch.nn.functional.grid_sample and torchvision.ops.roi_align (float64 / float32, rounded to 1e-6),
// plus a hand-computed RoiAlign max-mode case.
#include <gtest/gtest.h>

#include "ops/rule_harness.h"

namespace kiln::ops {
namespace {

using namespace testing;

// X = arange(12)^2 / 10 as [1,1,3,4]; grid points (x, y) inside, on and outside the border.
Tensor grid_x() { return f32({1, 1, 3, 4}, {0.0f, 0.1f, 0.4f, 0.9f, 1.6f, 2.5f, 3.6f, 4.9f, 6.4f, 8.1f, 10.0f, 12.1f}); }
Tensor grid() { return f32({1, 2, 3, 2}, {-1.2f, -0.9f, 0.3f, 0.1f, 0.95f, 1.4f, -0.5f, 0.6f, 0.0f, 0.0f, 1.1f, -1.05f}); }

std::vector<float> grid_sample(const std::string& mode, const std::string& padding, int64_t align_corners) {
  Tensor x = grid_x(), g = grid();
  Tensor y = eval("GridSample", {&x, &g},
                  {{"mode", str(mode)}, {"padding_mode", str(padding)}, {"align_corners", int_attr(align_corners)}}, 16)[0];
  EXPECT_EQ(y.shape(), (std::vector<int64_t>{1, 1, 2, 3}));
  return elements<float>(y);
}

TEST(GridSample, MatchesTorchAcrossModesAndPaddings) {
  expect_near_all(grid_sample("bilinear", "zeros", 0), {0.0f, 4.702f, 0.0f, 6.73f, 3.05f, 0.11475f});
  expect_near_all(grid_sample("bilinear", "reflection", 1), {0.214f, 4.181f, 9.0865f, 5.515f, 3.05f, 1.019f});
  expect_near_all(grid_sample("nearest", "border", 0), {0.0f, 3.6f, 12.1f, 6.4f, 3.6f, 0.9f});
  expect_near_all(grid_sample("bicubic", "zeros", 0), {-0.014402f, 5.064799f, -0.463644f, 7.694798f, 3.0125f, 0.024366f});
  expect_near_all(grid_sample("bicubic", "reflection", 0), {-0.270536f, 4.874589f, 11.903764f, 6.664619f, 3.0125f, 0.222532f});
  expect_near_all(grid_sample("bicubic", "border", 1), {0.081138f, 4.225411f, 12.753604f, 5.598391f, 3.0125f, 0.803065f});
}

TEST(GridSample, RuleShapesAndErrors) {
  const ir::Dim n = ir::Dim::symbol("n");
  EXPECT_EQ(rule_type("GridSample", {RuleInput{typed(DType::kFloat, {n, 3, 10, 10})}, RuleInput{typed(DType::kFloat, {n, 5, 7, 2})}},
                      {}, 16)
                .to_string(),
            "float[n,3,5,7]");
  std::string e = rule_error("GridSample", {RuleInput{ir::make_type(DType::kFloat, {1, 3, 4, 4})},
                                            RuleInput{ir::make_type(DType::kFloat, {1, 5, 7, 3})}},
                             {}, 16);
  EXPECT_NE(e.find("node_under_test"), std::string::npos);
  EXPECT_NE(e.find("grid"), std::string::npos);
  EXPECT_NE(rule_error("GridSample", {RuleInput{ir::make_type(DType::kFloat, {1, 3, 4, 4})},
                                      RuleInput{ir::make_type(DType::kFloat, {1, 5, 7, 2})}},
                       {{"mode", str("area")}}, 16)
                .find("mode"),
            std::string::npos);
  EXPECT_NE(rule_error("GridSample", {RuleInput{ir::make_type(DType::kFloat, {2, 3, 4, 4})},
                                      RuleInput{ir::make_type(DType::kFloat, {1, 5, 7, 2})}},
                       {}, 16)
                .find("batch"),
            std::string::npos);
}

// X = arange(80) as [2,2,4,5] (float); rois [[0.5,0.5,3.5,2.5] on image 1, [1,0,4,3.9] on image 0].
std::vector<float> roi_align(const std::string& transform, const Attrs& extra = {}) {
  std::vector<float> xv(80);
  for (int i = 0; i < 80; ++i) xv[static_cast<size_t>(i)] = static_cast<float>(i);
  Tensor x = f32({2, 2, 4, 5}, xv);
  Tensor rois = f32({2, 4}, {0.5f, 0.5f, 3.5f, 2.5f, 1, 0, 4, 3.9f});
  Tensor batch = i64({1, 0});
  Attrs attrs = {{"output_height", int_attr(2)}, {"output_width", int_attr(2)},
                 {"coordinate_transformation_mode", str(transform)}};
  attrs.insert(extra.begin(), extra.end());
  Tensor y = eval("RoiAlign", {&x, &rois, &batch}, attrs, 16)[0];
  EXPECT_EQ(y.shape(), (std::vector<int64_t>{2, 2, 2, 2}));
  return elements<float>(y);
}

TEST(RoiAlign, MatchesTorchvisionAvgWithAdaptiveSampling) {
  // torchvision.ops.roi_align(x, rois, (2,2), sampling_ratio=0, aligned=False / True).
  expect_near_all(roi_align("output_half_pixel"), {46.25f, 47.75f, 51.25f, 52.75f, 66.25f, 67.75f, 71.25f, 72.75f, 6.625f,
                                                   8.125f, 15.34375f, 16.84375f, 26.625f, 28.125f, 35.34375f, 36.84375f});
  expect_near_all(roi_align("half_pixel"), {43.25f, 44.75f, 48.25f, 49.75f, 63.25f, 64.75f, 68.25f, 69.75f, 3.65625f, 5.15625f,
                                            13.375f, 14.875f, 23.65625f, 25.15625f, 33.375f, 34.875f});
}

TEST(RoiAlign, MaxModeTakesTheLargestWeightedPixel) {
  // Hand-computed: X = [[1,2],[3,4]], roi [0,0,1,1], one 1x1 bin with one sample at (0.5, 0.5)
  // (output_half_pixel): all four pixels weigh 0.25, so avg = 2.5 and max = max(0.25 * v) = 1.
  Tensor x = f32({1, 1, 2, 2}, {1, 2, 3, 4});
  Tensor rois = f32({1, 4}, {0, 0, 1, 1});
  Tensor batch = i64({0});
  const Attrs attrs = {{"sampling_ratio", int_attr(1)}};
  EXPECT_EQ(elements<float>(eval("RoiAlign", {&x, &rois, &batch}, attrs, 10)[0]), (std::vector<float>{2.5f}));
  Attrs max_attrs = attrs;
  max_attrs["mode"] = str("max");
  EXPECT_EQ(elements<float>(eval("RoiAlign", {&x, &rois, &batch}, max_attrs, 10)[0]), (std::vector<float>{1.0f}));
  Tensor bad_batch = i64({3});
  EXPECT_FALSE(evaluate_op("RoiAlign", {&x, &rois, &bad_batch}, attrs, 10).is_ok());
}

TEST(RoiAlign, RuleShapesAndErrors) {
  const ir::Dim r = ir::Dim::symbol("r");
  EXPECT_EQ(rule_type("RoiAlign", {RuleInput{typed(DType::kFloat, {2, 8, 32, 32})}, RuleInput{typed(DType::kFloat, {r, 4})},
                                   RuleInput{typed(DType::kInt64, {r})}},
                      {{"output_height", int_attr(7)}, {"output_width", int_attr(5)}}, 16)
                .to_string(),
            "float[r,8,7,5]");
  std::string e = rule_error("RoiAlign", {RuleInput{ir::make_type(DType::kFloat, {2, 8, 32, 32})},
                                          RuleInput{ir::make_type(DType::kFloat, {3, 4})},
                                          RuleInput{ir::make_type(DType::kInt64, {2})}},
                             {}, 16);
  EXPECT_NE(e.find("node_under_test"), std::string::npos);
  EXPECT_NE(e.find("batch_indices"), std::string::npos);
  EXPECT_NE(rule_error("RoiAlign", {RuleInput{ir::make_type(DType::kFloat, {2, 8, 32, 32})},
                                    RuleInput{ir::make_type(DType::kFloat, {3, 4})},
                                    RuleInput{ir::make_type(DType::kInt64, {3})}},
                       {{"coordinate_transformation_mode", str("asymmetric")}}, 16)
                .find("coordinate_transformation_mode"),
            std::string::npos);
}

}  // namespace
}  // namespace kiln::ops
