// Tests of the quantization family: Quantize/DequantizeLinear (rounding, saturation, per-axis),
// DynamicQuantizeLinear, MatMulInteger, QLinearMatMul, ConvInteger and QLinearConv. Expected values
// were computed with numpy (the ONNX reference formulas) and torch.nn.functional.conv2d in float64
// on the zero-point-centred operands; the small ones are also checked by hand in the comments.
#include <gtest/gtest.h>

#include "ops/rule_harness.h"

namespace kiln::ops {
namespace {

using namespace testing;

template <class T>
Tensor make(DType dtype, std::vector<int64_t> shape, const std::vector<T>& v) {
  return Tensor::from_vector<T>(dtype, std::move(shape), v);
}
Tensor u8(std::vector<int64_t> shape, const std::vector<uint8_t>& v) { return make(DType::kUInt8, std::move(shape), v); }
Tensor s8(std::vector<int64_t> shape, const std::vector<int8_t>& v) { return make(DType::kInt8, std::move(shape), v); }
Tensor scalar_f32(float v) { return f32({}, {v}); }

TEST(QuantizeLinear, RoundsHalfToEvenAndSaturates) {
  // uint8, scale 1, no zero point: 0.5 -> 0, 1.5 -> 2, 2.5 -> 2, -1 -> 0, 254.5 -> 254, 255.5 and 300 -> 255.
  Tensor x = f32({7}, {0.5f, 1.5f, 2.5f, -1, 254.5f, 255.5f, 300});
  Tensor one = scalar_f32(1);
  EXPECT_EQ(elements<uint8_t>(eval("QuantizeLinear", {&x, &one})[0]), (std::vector<uint8_t>{0, 2, 2, 0, 254, 255, 255}));
  // int8 with zero point -1: rint(-127.5) - 1 = -129 -> -128, rint(126.5) - 1 = 125, rint(127.5) - 1 = 127.
  Tensor xi = f32({4}, {-127.5f, 126.5f, 127.5f, -200});
  Tensor zp = s8({}, {-1});
  EXPECT_EQ(elements<int8_t>(eval("QuantizeLinear", {&xi, &one, &zp}, {}, 10)[0]), (std::vector<int8_t>{-128, 125, 127, -128}));
}

TEST(QuantizeLinear, PerAxis) {
  // numpy: x = (arange(12) - 4).reshape(2,3,2) * 3, scale [1,2,4], zp [0,10,100] on axis 1.
  std::vector<float> xv(12);
  for (int i = 0; i < 12; ++i) xv[static_cast<size_t>(i)] = static_cast<float>((i - 4) * 3);
  Tensor x = f32({2, 3, 2}, xv), scale = f32({3}, {1, 2, 4});
  Tensor zp = u8({3}, {0, 10, 100});
  EXPECT_EQ(elements<uint8_t>(eval("QuantizeLinear", {&x, &scale, &zp}, {{"axis", int_attr(1)}})[0]),
            (std::vector<uint8_t>{0, 0, 7, 8, 100, 101, 6, 9, 16, 18, 104, 105}));
}

TEST(DequantizeLinear, PerAxisNegativeAxisAndInt32) {
  // numpy: (x - zp) * scale with x int8 [[-128,0,127],[5,-5,10]], scale [0.5,2,0.25], zp [1,-2,3] on axis -1.
  Tensor x = s8({2, 3}, {-128, 0, 127, 5, -5, 10});
  Tensor scale = f32({3}, {0.5f, 2, 0.25f});
  Tensor zp = s8({3}, {1, -2, 3});
  expect_near_all(elements<float>(eval("DequantizeLinear", {&x, &scale, &zp}, {{"axis", int_attr(-1)}})[0]),
                  {-64.5f, 4, 31, 2, -6, 1.75f});
  Tensor big = make<int32_t>(DType::kInt32, {2}, {-1000000, 7});
  Tensor half = scalar_f32(0.5f);
  EXPECT_EQ(elements<float>(eval("DequantizeLinear", {&big, &half})[0]), (std::vector<float>{-500000, 3.5f}));
}

TEST(QuantizeLinear, FourBitSaturatesAndFloat8Rounds) {
  // int4 with zero point 2: rint(x) + 2 saturated to [-8, 7]; x = 2.5 -> 2 + 2 = 4, -20 -> -8, 9 -> 7.
  Tensor x = f32({3}, {2.5f, -20, 9});
  Tensor one = scalar_f32(1);
  Int4 two{2};
  Tensor zp = Tensor::from_vector<Int4>(DType::kInt4, {}, {two});
  Tensor q = eval("QuantizeLinear", {&x, &one, &zp}, {}, 21)[0];
  ASSERT_EQ(q.dtype(), DType::kInt4);
  EXPECT_EQ(q.data<Int4>()[0].value, 4);
  EXPECT_EQ(q.data<Int4>()[1].value, -8);
  EXPECT_EQ(q.data<Int4>()[2].value, 7);
  Tensor back = eval("DequantizeLinear", {&q, &one, &zp}, {}, 21)[0];
  EXPECT_EQ(elements<float>(back), (std::vector<float>{2, -10, 5}));
  // float8: x / scale rounded to nearest even, saturated: 1.0625 / 1 -> 1, 1000 -> 448.
  Tensor f = f32({2}, {1.0625f, 1000});
  Tensor zp8 = Tensor::from_vector<Float8E4M3FN>(DType::kFloat8E4M3FN, {}, {Float8E4M3FN{}});
  Tensor q8 = eval("QuantizeLinear", {&f, &one, &zp8}, {}, 19)[0];
  EXPECT_EQ(elements<float>(eval("DequantizeLinear", {&q8, &one}, {}, 19)[0]), (std::vector<float>{1, 448}));
  // Before their opsets the narrow types are refused, naming the type.
  Tensor zp_old = Tensor::from_vector<Int4>(DType::kInt4, {}, {two});
  EXPECT_FALSE(evaluate_op("QuantizeLinear", {&x, &one, &zp_old}, {}, 19, 1).is_ok());
}

TEST(QuantizeLinear, RulesNameTheNode) {
  const ir::TensorType x = ir::make_type(DType::kFloat, {2, 3});
  const ir::TensorType scalar = ir::make_type(DType::kFloat, {});
  EXPECT_EQ(rule_type("QuantizeLinear", {RuleInput{x}, RuleInput{scalar}}).to_string(), "uint8[2,3]");
  EXPECT_EQ(rule_type("QuantizeLinear", {RuleInput{x}, RuleInput{scalar}, RuleInput{ir::make_type(DType::kInt8, {})}})
                .to_string(),
            "int8[2,3]");
  EXPECT_EQ(rule_type("DequantizeLinear", {RuleInput{ir::make_type(DType::kUInt8, {2, 3})}, RuleInput{scalar}}).to_string(),
            "float[2,3]");
  const std::vector<std::optional<RuleInput>> per_axis = {RuleInput{x}, RuleInput{ir::make_type(DType::kFloat, {3})}};
  std::string e = rule_error("QuantizeLinear", per_axis, {}, 10);
  EXPECT_NE(e.find("node_under_test"), std::string::npos);
  EXPECT_NE(e.find("before opset 13"), std::string::npos);
  EXPECT_NE(rule_error("QuantizeLinear", per_axis, {{"axis", int_attr(0)}}).find("axis 0"), std::string::npos);
  EXPECT_NE(rule_error("QuantizeLinear", {RuleInput{ir::make_type(DType::kDouble, {2})}, RuleInput{scalar}})
                .find("unsupported element type"),
            std::string::npos);
}

TEST(DynamicQuantizeLinear, StretchesTheRangeOverUint8) {
  // numpy, the spec's formula: scale = (max(x,0) - min(x,0)) / 255, zp = clip(round(-min/scale)), y = clip(round(x/scale) + zp).
  Tensor x = f32({6}, {-1.5f, 0.2f, 3.1f, 7.9f, -0.4f, 2.2f});
  std::vector<Tensor> out = eval("DynamicQuantizeLinear", {&x}, {}, 11, 3);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(elements<uint8_t>(out[0]), (std::vector<uint8_t>{0, 46, 125, 255, 30, 101}));
  EXPECT_FLOAT_EQ(elements<float>(out[1])[0], 0.036862746f);
  EXPECT_EQ(elements<uint8_t>(out[2])[0], 41);
  EXPECT_EQ(out[1].rank(), 0u);
}

TEST(MatMulInteger, PerRowAndPerColumnZeroPoints) {
  // numpy: (A - azp[:,None]) @ (B - bzp[None,:]) with A uint8 [4,3], B int8 [3,2].
  Tensor a = u8({4, 3}, {11, 7, 3, 10, 6, 2, 9, 5, 1, 8, 4, 0});
  Tensor b = s8({3, 2}, {-1, 2, 3, -4, 5, 6});
  Tensor azp = u8({4}, {1, 2, 3, 4});
  Tensor bzp = s8({2}, {1, -1});
  Tensor y = eval("MatMulInteger", {&a, &b, &azp, &bzp}, {}, 10)[0];
  EXPECT_EQ(y.dtype(), DType::kInt32);
  EXPECT_EQ(elements<int32_t>(y), (std::vector<int32_t>{0, 26, -8, 12, -16, -2, -24, -16}));
  // No zero points: a plain product. [1,2] x [[3],[4]] = 11.
  Tensor a1 = u8({1, 2}, {1, 2}), b1 = u8({2, 1}, {3, 4});
  EXPECT_EQ(elements<int32_t>(eval("MatMulInteger", {&a1, &b1}, {}, 10)[0]), (std::vector<int32_t>{11}));
  Tensor bad = s8({3}, {1, 2, 3});
  EXPECT_FALSE(evaluate_op("MatMulInteger", {&a, &b, &azp, &bad}, {}, 10).is_ok());
}

TEST(QLinearMatMul, BatchBroadcastAndPerColumnScales) {
  // numpy: C = (a - 100) @ (b - [2,-3]); y = clip(rint(C * (0.02 * [0.01,0.03] / 0.05) - 10), -128, 127).
  Tensor a = u8({2, 2, 3}, {200, 100, 0, 50, 60, 70, 1, 2, 3, 255, 128, 0});
  Tensor b = s8({3, 2}, {10, -20, 30, -40, -50, 60});
  Tensor a_scale = scalar_f32(0.02f), b_scale = f32({2}, {0.01f, 0.03f}), y_scale = scalar_f32(0.05f);
  Tensor a_zp = u8({}, {100}), b_zp = s8({2}, {2, -3}), y_zp = s8({}, {-10});
  Tensor y = eval("QLinearMatMul", {&a, &a_scale, &a_zp, &b, &b_scale, &b_zp, &y_scale, &y_zp}, {}, 10)[0];
  EXPECT_EQ(y.shape(), (std::vector<int64_t>{2, 2, 2}));
  EXPECT_EQ(elements<int8_t>(y), (std::vector<int8_t>{14, -106, -10, -5, -4, -20, 19, -128}));
  std::vector<std::optional<RuleInput>> in;
  for (const Tensor* t : {&a, &a_scale, &a_zp, &b, &b_scale, &b_zp, &y_scale, &y_zp})
    in.push_back(RuleInput{ir::make_type(t->dtype(), t->shape())});
  in[3] = RuleInput{ir::make_type(DType::kInt8, {4, 2})};
  EXPECT_NE(rule_error("QLinearMatMul", in, {}, 10).find("inner dimensions"), std::string::npos);
}

// x [1,2,3,3] = (arange(18) * 7) % 23, w [2,2,2,2] = arange(16) % 5 - 2.
Tensor conv_x() { return u8({1, 2, 3, 3}, {0, 7, 14, 21, 5, 12, 19, 3, 10, 17, 1, 8, 15, 22, 6, 13, 20, 4}); }
Tensor conv_w() { return s8({2, 2, 2, 2}, {-2, -1, 0, 1, 2, -2, -1, 0, 1, 2, -2, -1, 0, 1, 2, -2}); }

TEST(ConvInteger, PaddedWithPerChannelWeightZeroPoint) {
  // torch conv2d(x - 5, w - [1,-1] per output channel, padding=1) in float64.
  Tensor x = conv_x(), w = conv_w(), xzp = u8({}, {5}), wzp = s8({2}, {1, -1});
  Tensor y = eval("ConvInteger", {&x, &w, &xzp, &wzp}, {{"pads", ints({1, 1, 1, 1})}}, 10)[0];
  EXPECT_EQ(y.shape(), (std::vector<int64_t>{1, 2, 4, 4}));
  EXPECT_EQ(elements<int32_t>(y), (std::vector<int32_t>{-12, -15, 3, -15, -36, -18, -72, -33, -70, -134, -27, -23, -52, -75,
                                                        14, -16, -12, 45, -17, 0, -1, -3, 83, 17, 60, 71, 88, 7, 58, 60, 24, 9}));
}

TEST(QLinearConv, BiasAndPerChannelScales) {
  // torch conv2d(x - 5, w - [1,-1], bias [100,-50], stride 2, padding 1) = acc; then numpy
  // clip(rint(acc * 0.1 * [0.2,0.05] / 0.3 + 128), 0, 255).
  Tensor x = conv_x(), w = conv_w();
  Tensor x_scale = scalar_f32(0.1f), x_zp = u8({}, {5}), w_scale = f32({2}, {0.2f, 0.05f}), w_zp = s8({2}, {1, -1});
  Tensor y_scale = scalar_f32(0.3f), y_zp = u8({}, {128});
  Tensor bias = make<int32_t>(DType::kInt32, {2}, {100, -50});
  Tensor y = eval("QLinearConv", {&x, &x_scale, &x_zp, &w, &w_scale, &w_zp, &y_scale, &y_zp, &bias},
                  {{"pads", ints({1, 1, 1, 1})}, {"strides", ints({2, 2})}}, 10)[0];
  EXPECT_EQ(y.shape(), (std::vector<int64_t>{1, 2, 2, 2}));
  EXPECT_EQ(elements<uint8_t>(y), (std::vector<uint8_t>{134, 135, 130, 133, 127, 127, 128, 129}));
}

TEST(QLinearConv, RuleChecksChannelsAndNamesTheNode) {
  auto t = [](DType d, std::vector<int64_t> s) { return std::optional<RuleInput>(RuleInput{ir::make_type(d, std::move(s))}); };
  std::vector<std::optional<RuleInput>> in = {t(DType::kUInt8, {1, 3, 5, 5}), t(DType::kFloat, {}), t(DType::kUInt8, {}),
                                              t(DType::kInt8, {4, 3, 3, 3}), t(DType::kFloat, {4}), t(DType::kInt8, {4}),
                                              t(DType::kFloat, {}), t(DType::kInt8, {})};
  EXPECT_EQ(rule_type("QLinearConv", in, {}, 10).to_string(), "int8[1,4,3,3]");
  in[3] = t(DType::kInt8, {4, 2, 3, 3});
  std::string e = rule_error("QLinearConv", in, {}, 10);
  EXPECT_NE(e.find("node_under_test"), std::string::npos);
  EXPECT_NE(e.find("channels"), std::string::npos);
  EXPECT_EQ(rule_type("ConvInteger", {t(DType::kUInt8, {2, 3, 5, 5}), t(DType::kUInt8, {4, 3, 2, 2})}, {}, 10).to_string(),
            "int32[2,4,4,4]");
}

}  // namespace
}  // namespace kiln::ops
