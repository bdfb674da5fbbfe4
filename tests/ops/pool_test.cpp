// Tests of the pooling ops: output-size rules (ceil_mode, auto_pad, symbolic dims), MaxPool values
// and Indices, AveragePool with and without pad counting, Lp and Global pools, MaxUnpool.
// Expected values are hand-computed on small inputs.
#include <gtest/gtest.h>

#include "ops/rule_harness.h"

namespace kiln::ops {
namespace {

using namespace testing;
const ir::Dim kBatch = ir::Dim::symbol("batch");

TEST(Pool, RuleSizesWithCeilModeAndSymbols) {
  // ResNet stem: 112 -> 56 with kernel 3, stride 2, pads 1.
  EXPECT_EQ(rule_type("MaxPool", {RuleInput{typed(DType::kFloat, {kBatch, 64, 112, 112})}},
                      {{"kernel_shape", ints({3, 3})}, {"strides", ints({2, 2})}, {"pads", ints({1, 1, 1, 1})}})
                .to_string(),
            "float[batch,64,56,56]");
  // 4 with kernel 3 stride 2: floor -> 1, ceil -> 2.
  const Attrs ceil = {{"kernel_shape", ints({3})}, {"strides", ints({2})}, {"ceil_mode", int_attr(1)}};
  EXPECT_EQ(rule_type("AveragePool", {RuleInput{ir::make_type(DType::kFloat, {1, 1, 4})}}, ceil).to_string(), "float[1,1,2]");
  EXPECT_EQ(rule_type("GlobalAveragePool", {RuleInput{typed(DType::kFloat, {kBatch, 8, 7, 7})}}).to_string(),
            "float[batch,8,1,1]");
  EXPECT_NE(rule_error("MaxPool", {RuleInput{ir::make_type(DType::kFloat, {1, 1, 4, 4})}}, {{"kernel_shape", ints({3})}})
                .find("node_under_test"),
            std::string::npos);
  EXPECT_NE(rule_error("MaxPool", {RuleInput{ir::make_type(DType::kFloat, {1, 1, 4, 4})}},
                       {{"kernel_shape", ints({2, 2})}, {"pads", ints({1, 1, 1})}})
                .find("pads"),
            std::string::npos);
}

TEST(Pool, MaxPoolWithIndicesInBothStorageOrders) {
  // x = [[1,5,2],[7,3,4],[0,9,8]] (3x3), kernel 2, stride 1 -> maxima [[7,5],[9,9]]
  // at row-major offsets [3,1,7,7]; column-major offsets (w * H + h): [1,3,5,5].
  Tensor x = f32({1, 1, 3, 3}, {1, 5, 2, 7, 3, 4, 0, 9, 8});
  std::vector<Tensor> out = eval("MaxPool", {&x}, {{"kernel_shape", ints({2, 2})}}, 12, 2);
  EXPECT_EQ(elements<float>(out[0]), (std::vector<float>{7, 5, 9, 9}));
  EXPECT_EQ(elements<int64_t>(out[1]), (std::vector<int64_t>{3, 1, 7, 7}));
  out = eval("MaxPool", {&x}, {{"kernel_shape", ints({2, 2})}, {"storage_order", int_attr(1)}}, 12, 2);
  EXPECT_EQ(elements<int64_t>(out[1]), (std::vector<int64_t>{1, 3, 5, 5}));
}

TEST(Pool, MaxPoolUint8DilatedAndSameUpper) {
  // 1-D uint8 [3,1,4,1,5], kernel 2, dilation 2: windows {0,2},{1,3},{2,4} -> [4,1,5]
  Tensor x = Tensor::from_vector<uint8_t>(DType::kUInt8, {1, 1, 5}, {3, 1, 4, 1, 5});
  EXPECT_EQ(elements<uint8_t>(eval("MaxPool", {&x}, {{"kernel_shape", ints({2})}, {"dilations", ints({2})}})[0]),
            (std::vector<uint8_t>{4, 1, 5}));
  // SAME_UPPER, kernel 2, stride 2 on 5: out 3, total pad 1 at the end -> [3, 4, 5]
  EXPECT_EQ(elements<uint8_t>(eval("MaxPool", {&x}, {{"kernel_shape", ints({2})}, {"strides", ints({2})}, {"auto_pad", str("SAME_UPPER")}})[0]),
            (std::vector<uint8_t>{3, 4, 5}));
}

TEST(Pool, AveragePoolPadCounting) {
  // x = [1,2,3], kernel 2, pads 1 each side: out = (3 + 2 - 2) / 1 + 1 = 4 windows
  // {pad,1}, {1,2}, {2,3}, {3,pad}; the pad counts in the divisor only with count_include_pad.
  Tensor x = f32({1, 1, 3}, {1, 2, 3});
  const Attrs a = {{"kernel_shape", ints({2})}, {"pads", ints({1, 1})}};
  EXPECT_EQ(elements<float>(eval("AveragePool", {&x}, a)[0]), (std::vector<float>{1, 1.5f, 2.5f, 3}));
  Attrs with_pad = a;
  with_pad["count_include_pad"] = int_attr(1);
  EXPECT_EQ(elements<float>(eval("AveragePool", {&x}, with_pad)[0]), (std::vector<float>{0.5f, 1.5f, 2.5f, 1.5f}));
  // ceil_mode on 4 with kernel 3, stride 2: the second window {2,3} is partial and averages 2 values.
  Tensor four = f32({1, 1, 4}, {1, 2, 3, 4});
  EXPECT_EQ(elements<float>(eval("AveragePool", {&four}, {{"kernel_shape", ints({3})}, {"strides", ints({2})}, {"ceil_mode", int_attr(1)}})[0]),
            (std::vector<float>{2, 3.5f}));
}

TEST(Pool, GlobalAndLpPools) {
  Tensor x = f32({1, 2, 2, 2}, {1, 2, 3, 4, -1, -2, -3, 4});
  EXPECT_EQ(elements<float>(eval("GlobalAveragePool", {&x})[0]), (std::vector<float>{2.5f, -0.5f}));
  EXPECT_EQ(elements<float>(eval("GlobalMaxPool", {&x})[0]), (std::vector<float>{4, 4}));
  // GlobalLpPool p=2: sqrt(1+4+9+16) = sqrt(30), sqrt(1+4+9+16) = sqrt(30)
  expect_near_all(elements<float>(eval("GlobalLpPool", {&x})[0]), {std::sqrt(30.0f), std::sqrt(30.0f)});
  // LpPool p=1 over kernel 2x2 stride 2 is the sum of absolute values: 10 and 10.
  expect_near_all(elements<float>(eval("LpPool", {&x}, {{"kernel_shape", ints({2, 2})}, {"p", int_attr(1)}})[0]), {10, 10});
}

TEST(Pool, MaxUnpoolPlacesValuesAtIndices) {
  // x = [5,6,7,8] at flat indices [5,7,13,15] of the 4x4 plane that kernel 2, stride 2 unpools to.
  Tensor x = f32({1, 1, 2, 2}, {5, 6, 7, 8});
  Tensor idx = i64({1, 1, 2, 2}, {5, 7, 13, 15});
  Tensor y = eval("MaxUnpool", {&x, &idx}, {{"kernel_shape", ints({2, 2})}, {"strides", ints({2, 2})}})[0];
  EXPECT_EQ(y.shape(), (std::vector<int64_t>{1, 1, 4, 4}));
  std::vector<float> want(16, 0.0f);
  want[5] = 5;
  want[7] = 6;
  want[13] = 7;
  want[15] = 8;
  EXPECT_EQ(elements<float>(y), want);
}

}  // namespace
}  // namespace kiln::ops
