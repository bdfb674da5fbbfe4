// Tests of Conv and ConvTranspose: shape rules (symbolic batch, auto_pad, channel checks) and
// kernel values computed with torch.nn.functional.conv{1,2}d / conv_transpose{1,2}d in float64.
#include <gtest/gtest.h>

#include "kiln/ir/float16.h"
#include "ops/rule_harness.h"

namespace kiln::ops {
namespace {

using namespace testing;
const ir::Dim kBatch = ir::Dim::symbol("batch");

TEST(Conv, RuleKeepsBatchSymbolAndResolvesAutoPad) {
  const ir::TensorType w = ir::make_type(DType::kFloat, {64, 3, 7, 7});
  EXPECT_EQ(rule_type("Conv", {RuleInput{typed(DType::kFloat, {kBatch, 3, 224, 224})}, RuleInput{w}},
                      {{"strides", ints({2, 2})}, {"pads", ints({3, 3, 3, 3})}})
                .to_string(),
            "float[batch,64,112,112]");
  EXPECT_EQ(rule_type("Conv", {RuleInput{typed(DType::kFloat, {kBatch, 3, 15, ir::Dim::symbol("w")})}, RuleInput{w}},
                      {{"strides", ints({2, 2})}, {"auto_pad", str("SAME_UPPER")}})
                .to_string(),
            "float[batch,64,8,?]");
}

TEST(Conv, RuleErrorsNameTheNode) {
  const ir::TensorType x = ir::make_type(DType::kFloat, {1, 4, 8, 8});
  std::string e = rule_error("Conv", {RuleInput{x}, RuleInput{ir::make_type(DType::kFloat, {8, 3, 3, 3})}});
  EXPECT_NE(e.find("node_under_test"), std::string::npos);
  EXPECT_NE(e.find("channels"), std::string::npos);
  EXPECT_NE(rule_error("Conv", {RuleInput{x}, RuleInput{ir::make_type(DType::kFloat, {8, 4, 3, 3})}}, {{"pads", ints({1, 1})}})
                .find("pads"),
            std::string::npos);
  EXPECT_NE(rule_error("Conv", {RuleInput{x}, RuleInput{ir::make_type(DType::kFloat, {8, 4, 9, 9})}}).find("does not fit"),
            std::string::npos);
  EXPECT_NE(rule_error("Conv", {RuleInput{x}, RuleInput{ir::make_type(DType::kFloat, {8, 4, 3, 3})},
                                RuleInput{ir::make_type(DType::kFloat, {7})}})
                .find("bias"),
            std::string::npos);
}

TEST(Conv, GroupedStridedPaddedWithBias) {
  // torch: x = arange(100)/10 as [1,4,5,5], w = arange(36)/20 - 0.8 as [2,2,3,3], b = [0.5,-0.5],
  // conv2d(x, w, b, stride=2, padding=1, groups=2)
  std::vector<float> xv(100), wv(36);
  for (int i = 0; i < 100; ++i) xv[i] = i / 10.0f;
  for (int i = 0; i < 36; ++i) wv[i] = i / 20.0f - 0.8f;
  Tensor x = f32({1, 4, 5, 5}, xv), w = f32({2, 2, 3, 3}, wv), b = f32({2}, {0.5f, -0.5f});
  Tensor y = eval("Conv", {&x, &w, &b}, {{"strides", ints({2, 2})}, {"pads", ints({1, 1, 1, 1})}, {"group", int_attr(2)}})[0];
  EXPECT_EQ(y.shape(), (std::vector<int64_t>{1, 2, 3, 3}));
  expect_near_all(elements<float>(y), {-0.5f, -1.98f, -1.9f, -5.17f, -10.015f, -7.99f, -7.46f, -13.14f, -9.82f, 34.66f,
                                       51.38f, 33.42f, 51.67f, 75.925f, 49.09f, 32.5f, 47.42f, 30.3f});
}

TEST(Conv, DepthwiseDilated1d) {
  // torch: conv1d([[1..6],[6..1]], w=[[[1,-1]],[[2,1]]], groups=2, dilation=2)
  Tensor x = f32({1, 2, 6}, {1, 2, 3, 4, 5, 6, 6, 5, 4, 3, 2, 1});
  Tensor w = f32({2, 1, 2}, {1, -1, 2, 1});
  Tensor y = eval("Conv", {&x, &w}, {{"group", int_attr(2)}, {"dilations", ints({2})}})[0];
  EXPECT_EQ(elements<float>(y), (std::vector<float>{-2, -2, -2, -2, 16, 13, 10, 7}));
}

TEST(Conv, SameLowerPadsTheBeginning) {
  // Hand-computed: x = [1,2,3,4], kernel [1,1,1], stride 2, SAME_LOWER: out = 2, total pad 1 at the
  // beginning -> windows [0,1,2] and [2,3,4] -> [0+1+2, 2+3+4] = [3, 9].
  Tensor x = f32({1, 1, 4}, {1, 2, 3, 4}), w = f32({1, 1, 3}, {1, 1, 1});
  EXPECT_EQ(elements<float>(eval("Conv", {&x, &w}, {{"strides", ints({2})}, {"auto_pad", str("SAME_LOWER")}})[0]),
            (std::vector<float>{3, 9}));
  EXPECT_EQ(elements<float>(eval("Conv", {&x, &w}, {{"strides", ints({2})}, {"auto_pad", str("SAME_UPPER")}})[0]),
            (std::vector<float>{6, 7}));
}

TEST(Conv, PointwiseDoubleAndHalf) {
  // 1x1 conv is a channel matmul: y[m] = sum_c w[m,c] * x[c].
  Tensor x = Tensor::from_vector<double>(DType::kDouble, {1, 2, 1, 2}, {1, 2, 3, 4});
  Tensor w = Tensor::from_vector<double>(DType::kDouble, {1, 2, 1, 1}, {10, 100});
  EXPECT_EQ(elements<double>(eval("Conv", {&x, &w})[0]), (std::vector<double>{310, 420}));
  Tensor xh = Tensor::from_vector<Float16>(DType::kFloat16, {1, 2, 1, 1}, {ir::to_float16(1.5f), ir::to_float16(2.0f)});
  Tensor wh = Tensor::from_vector<Float16>(DType::kFloat16, {1, 2, 1, 1}, {ir::to_float16(2.0f), ir::to_float16(0.25f)});
  Tensor yh = eval("Conv", {&xh, &wh})[0];
  ASSERT_EQ(yh.dtype(), DType::kFloat16);
  EXPECT_EQ(ir::to_float(yh.data<Float16>()[0]), 3.5f);
}

TEST(ConvTranspose, StridedOneD) {
  // Hand-computed: x = [1,2,3], w = [1,1,1], stride 2: each x[i] adds to y[2i .. 2i+2].
  Tensor x = f32({1, 1, 3}, {1, 2, 3}), w = f32({1, 1, 3}, {1, 1, 1});
  EXPECT_EQ(elements<float>(eval("ConvTranspose", {&x, &w}, {{"strides", ints({2})}})[0]), (std::vector<float>{1, 1, 3, 2, 5, 3, 3}));
  // output_shape 9 extends the end (the two extra positions hold the bias, 0).
  EXPECT_EQ(elements<float>(eval("ConvTranspose", {&x, &w}, {{"strides", ints({2})}, {"output_shape", ints({9})}})[0]),
            (std::vector<float>{1, 1, 3, 2, 5, 3, 3, 0, 0}));
}

TEST(ConvTranspose, GroupedWithPaddingAndOutputPadding) {
  // torch: conv_transpose2d(arange(8) as [1,2,2,2], arange(8)/4 as [2,1,2,2], stride=2, padding=1,
  // output_padding=1, groups=2)
  Tensor x = iota_f32({1, 2, 2, 2});
  std::vector<float> wv(8);
  for (int i = 0; i < 8; ++i) wv[i] = i / 4.0f;
  Tensor w = f32({2, 1, 2, 2}, wv);
  Tensor y = eval("ConvTranspose", {&x, &w},
                  {{"strides", ints({2, 2})}, {"pads", ints({1, 1, 1, 1})}, {"output_padding", ints({1, 1})}, {"group", int_attr(2)}})[0];
  EXPECT_EQ(y.shape(), (std::vector<int64_t>{1, 2, 3, 3}));
  expect_near_all(elements<float>(y), {0, 0.5f, 0.75f, 0.5f, 0, 0.75f, 1.5f, 1.5f, 2.25f, 7, 7.5f, 8.75f, 7.5f, 7, 8.75f,
                                       10.5f, 10.5f, 12.25f});
  EXPECT_EQ(rule_type("ConvTranspose", {RuleInput{typed(DType::kFloat, {kBatch, 2, 2, 2})}, RuleInput{ir::make_type(DType::kFloat, {2, 1, 2, 2})}},
                      {{"strides", ints({2, 2})}, {"group", int_attr(2)}})
                .to_string(),
            "float[batch,2,4,4]");
}

}  // namespace
}  // namespace kiln::ops
