// Tests of the operator versions of opsets 18-21 (their values are checked against ONNX Runtime in
// tests/opset_parity): what each refuses, with a message naming the rule broken, and the small
// exact cases worked by hand.
#include "ops/family_test_util.h"

namespace kiln::ops::testing {
namespace {

bool says(const std::string& message, const std::string& part) { return message.find(part) != std::string::npos; }

TEST(NewVersions, ResizeAxesAndAspectPolicyAreChecked) {
  const Tensor x = floats({1, 1, 2, 2}, {1, 2, 3, 4});
  const Tensor sizes = int64s({2}, {4, 4});
  EXPECT_TRUE(says(run_error("Resize", {&x, nullptr, nullptr, &sizes}, {{"axes", attr_is({2, 2})}}, 18), "repeated"));
  EXPECT_TRUE(says(run_error("Resize", {&x, nullptr, nullptr, &sizes}, {{"keep_aspect_ratio_policy", ir::Attribute::of_string("fit")}}, 18),
                   "keep_aspect_ratio_policy"));
  EXPECT_TRUE(says(run_error("Resize", {&x, nullptr, nullptr, &sizes}, {{"axes", attr_is({2, 3})},
                                                                          {"coordinate_transformation_mode", ir::Attribute::of_string("half_pixel_symmetric")}}, 18),
                   "needs opset 19"));
  // Sizes for axes 2 and 3 only; nearest with asymmetric coordinates repeats each element twice.
  const auto y = run("Resize", {&x, nullptr, nullptr, &sizes},
                     {{"axes", attr_is({2, 3})}, {"coordinate_transformation_mode", ir::Attribute::of_string("asymmetric")},
                      {"nearest_mode", ir::Attribute::of_string("floor")}}, 18);
  expect_near(y[0], {1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4}, {1, 1, 4, 4});
}

TEST(NewVersions, GroupNormalizationNeedsGroupsThatDivideTheChannelsAndMatchingParameters) {
  const Tensor x = floats({1, 4, 1, 1}, {1, 2, 3, 5});
  const Tensor two = floats({2}, {1, 1}), zero2 = floats({2}, {0, 0}), four = floats({4}, {1, 1, 1, 1}), zero4 = floats({4}, {0, 0, 0, 0});
  EXPECT_TRUE(says(run_error("GroupNormalization", {&x, &two, &zero2}, {{"num_groups", ir::Attribute::of_int(3)}}, 18), "groups"));
  EXPECT_TRUE(says(run_error("GroupNormalization", {&x, &two, &zero2}, {{"num_groups", ir::Attribute::of_int(2)}}, 21), "[4]"));
  // Two groups {1, 2} and {3, 5}: each normalised to -1, 1 (epsilon 0).
  const auto y = run("GroupNormalization", {&x, &four, &zero4}, {{"num_groups", ir::Attribute::of_int(2)}, {"epsilon", ir::Attribute::of_float(0)}}, 21);
  expect_near(y[0], {-1, 1, -1, 1}, {1, 4, 1, 1});
}

TEST(NewVersions, Col2ImSumsOverlappingBlocksAndChecksTheirCount) {
  // One channel, image 1x3, blocks 1x2 at stride 1: columns [[a, b], [c, d]] give [a, b + c, d].
  const Tensor x = floats({1, 2, 2}, {1, 2, 10, 20});
  const Tensor image = int64s({2}, {1, 3}), block = int64s({2}, {1, 2});
  expect_near(run("Col2Im", {&x, &image, &block}, {}, 18)[0], {1, 12, 20}, {1, 1, 1, 3});
  const Tensor wrong = floats({1, 2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_TRUE(says(run_error("Col2Im", {&wrong, &image, &block}, {}, 18), "blocks"));
}

TEST(NewVersions, CenterCropPadCropsAndPadsAboutTheCentre) {
  const Tensor x = floats({5}, {1, 2, 3, 4, 5});
  const Tensor three = int64s({1}, {3}), seven = int64s({1}, {7});
  expect_near(run("CenterCropPad", {&x, &three}, {}, 18)[0], {2, 3, 4}, {3});
  expect_near(run("CenterCropPad", {&x, &seven}, {}, 18)[0], {0, 1, 2, 3, 4, 5, 0}, {7});
  const Tensor two = int64s({2}, {3, 3});
  EXPECT_TRUE(says(run_error("CenterCropPad", {&x, &two}, {}, 18), "axes"));
}

TEST(NewVersions, AffineGridMapsPixelCentresThroughTheMatrix) {
  const Tensor identity = floats({1, 2, 3}, {1, 0, 0, 0, 1, 0});
  const Tensor size = int64s({4}, {1, 1, 1, 2});
  // W = 2 pixel centres at -0.5 and 0.5 (align_corners 0); H = 1 at 0.
  expect_near(run("AffineGrid", {&identity, &size}, {}, 20)[0], {-0.5, 0, 0.5, 0}, {1, 1, 2, 2});
  const Tensor size3d = int64s({5}, {1, 1, 1, 1, 2});
  EXPECT_TRUE(says(run_error("AffineGrid", {&identity, &size3d}, {}, 20), "theta"));
}

TEST(NewVersions, DeformConvWithZeroOffsetsIsAConvolutionAndChecksTheOffsetShape) {
  // One channel 1x3, kernel 1x2, zero offsets, no mask: [1*1 + 2*2, 2*1 + 3*2] = [5, 8].
  const Tensor x = floats({1, 1, 1, 3}, {1, 2, 3});
  const Tensor w = floats({1, 1, 1, 2}, {1, 2});
  const Tensor offset = floats({1, 4, 1, 2}, {0, 0, 0, 0, 0, 0, 0, 0});
  expect_near(run("DeformConv", {&x, &w, &offset}, {}, 19)[0], {5, 8}, {1, 1, 1, 2});
  // A half-pixel shift to the right of every tap: [1.5 + 2 * 2.5, 2.5 + 2 * 3 / 2] (3.5 is half outside).
  const Tensor right = floats({1, 4, 1, 2}, {0, 0, 0.5f, 0.5f, 0, 0, 0.5f, 0.5f});
  expect_near(run("DeformConv", {&x, &w, &right}, {}, 19)[0], {6.5, 5.5}, {1, 1, 1, 2});
  const Tensor wrong = floats({1, 2, 1, 2}, {0, 0, 0, 0});
  EXPECT_TRUE(says(run_error("DeformConv", {&x, &w, &wrong}, {}, 19), "offset must have shape"));
}

TEST(NewVersions, BlockQuantizationNeedsAScaleShapedByTheBlocks) {
  const Tensor x = floats({2, 4}, {0, 1, 2, 3, 4, 5, 6, 7});
  const Tensor blocks = floats({2, 2}, {1, 2, 1, 4});
  const auto y = run("QuantizeLinear", {&x, &blocks}, {{"axis", ir::Attribute::of_int(1)}, {"block_size", ir::Attribute::of_int(2)}}, 21);
  EXPECT_EQ(values<uint8_t>(y[0]), (std::vector<uint8_t>{0, 1, 1, 2, 4, 5, 2, 2}));  // 6 / 4 = 1.5 and 7 / 4 = 1.75 round to 2
  const Tensor wrong = floats({2, 3}, {1, 1, 1, 1, 1, 1});
  EXPECT_TRUE(says(run_error("QuantizeLinear", {&x, &wrong}, {{"axis", ir::Attribute::of_int(1)}, {"block_size", ir::Attribute::of_int(2)}}, 21),
                   "must have shape [2,2]"));
  EXPECT_TRUE(says(run_error("QuantizeLinear", {&x, &blocks}, {{"axis", ir::Attribute::of_int(1)}}, 19), "1-D"));
}

TEST(NewVersions, ScatterMaxAndMinNeedOpset18) {
  const Tensor data = floats({3}, {1, 5, 3});
  const Tensor indices = int64s({2}, {0, 1}), updates = floats({2}, {4, 2});
  expect_near(run("ScatterElements", {&data, &indices, &updates}, {{"reduction", ir::Attribute::of_string("max")}}, 18)[0], {4, 5, 3}, {3});
  EXPECT_TRUE(says(run_error("ScatterElements", {&data, &indices, &updates}, {{"reduction", ir::Attribute::of_string("min")}}, 16),
                   "needs opset 18"));
}

TEST(NewVersions, GridSample20SamplesMapsOfAnyRank) {
  // One spatial dim (ONNX Runtime takes only 2-D and 3-D maps): x = [1, 2, 4, 8]; align_corners 1
  // puts -1 on pixel 0 and 1 on pixel 3, so -1/3 is pixel 1, 0 is pixel 1.5, 1 is pixel 3.
  const Tensor line = floats({1, 1, 4}, {1, 2, 4, 8});
  const Tensor at = floats({1, 3, 1}, {-1.0f / 3, 0, 1});
  expect_near(run("GridSample", {&line, &at}, {{"align_corners", ir::Attribute::of_int(1)}}, 20)[0], {2, 3, 8}, {1, 1, 3});
  // Cubic weights sum to 1: a constant 3-D volume with border padding samples to the constant
  // anywhere, even far outside (ONNX Runtime's cubic is 2-D only).
  const Tensor volume = floats({1, 1, 2, 2, 2}, {5, 5, 5, 5, 5, 5, 5, 5});
  const Tensor points = floats({1, 1, 1, 2, 3}, {0.3f, -0.7f, 0.1f, 2.5f, -3, 0.9f});
  expect_near(run("GridSample", {&volume, &points},
                  {{"mode", ir::Attribute::of_string("cubic")}, {"padding_mode", ir::Attribute::of_string("border")}}, 20)[0],
              {5, 5}, {1, 1, 1, 1, 2});
  const Tensor wrong = floats({1, 1, 1, 2, 2}, {0, 0, 0, 0});
  EXPECT_TRUE(says(run_error("GridSample", {&volume, &wrong}, {}, 20), "grid's last dim"));
  EXPECT_TRUE(says(run_error("GridSample", {&line, &at}, {}, 16), "rank 4"));
}

TEST(NewVersions, Dft20TakesItsAxisAsAnInput) {
  // [1, 1, 1, 1] along axis 0 of a [4, 2, 1] real signal whose column 1 is [1, 0, 0, 0]: bins 4, 0, 0,
  // 0 and 1, 1, 1, 1.
  const Tensor x = floats({4, 2, 1}, {1, 1, 1, 0, 1, 0, 1, 0});
  const Tensor axis0 = int64s({}, {0});
  expect_near(run("DFT", {&x, nullptr, &axis0}, {}, 20)[0], {4, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0}, {4, 2, 2});
  const Tensor last = int64s({}, {2});
  EXPECT_TRUE(says(run_error("DFT", {&x, nullptr, &last}, {}, 20), "trailing real/imaginary"));
  const Tensor zero = int64s({}, {0});
  EXPECT_TRUE(says(run_error("DFT", {&x, &zero}, {}, 20), "dft_length must be positive"));
}

TEST(NewVersions, OptionalOps18TakeTensorsAndOlderVersionsNeedOptionals) {
  const Tensor x = floats({2}, {1, 2});
  EXPECT_EQ(values<bool>(run("OptionalHasElement", {&x}, {}, 18)[0]), (std::vector<bool>{true}));
  EXPECT_EQ(values<bool>(run("OptionalHasElement", {nullptr}, {}, 18)[0]), (std::vector<bool>{false}));
  expect_near(run("OptionalGetElement", {&x}, {}, 18)[0], {1, 2}, {2});
  const ir::TensorType tensor = ir::make_type(DType::kFloat, {2});
  EXPECT_TRUE(says(infer("OptionalGetElement", {tensor}, {}, 15).status().message(), "must be an optional before opset 18"));
  EXPECT_TRUE(says(infer("OptionalHasElement", {}, {}, 15).status().message(), "required"));
  EXPECT_TRUE(infer("OptionalHasElement", {ir::TensorType::optional_of(tensor)}, {}, 15).is_ok());
}

}  // namespace
}  // namespace kiln::ops::testing
