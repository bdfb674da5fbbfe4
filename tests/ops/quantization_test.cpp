// Tests of QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear and the window generators on
// values worked out by hand (ties round to even; results saturate).
#include <gtest/gtest.h>

#include <cmath>

#include "kiln/ops/evaluate.h"

namespace kiln::ops {
namespace {

Tensor floats(std::vector<int64_t> shape, std::vector<float> v) { return Tensor::from_vector<float>(DType::kFloat, shape, v); }

TEST(Quantization, RoundsHalfToEvenAndSaturates) {
  const Tensor x = floats({5}, {0.5f, 1.5f, 2.5f, -3.0f, 1000.0f});
  const Tensor scale = floats({}, {1.0f});
  const Tensor zero = Tensor::from_vector<uint8_t>(DType::kUInt8, {}, {1});
  auto y = evaluate_op("QuantizeLinear", {&x, &scale, &zero}, {}, 13);
  ASSERT_TRUE(y.is_ok()) << y.status().to_string();
  const uint8_t* q = y.value()[0].data<uint8_t>();
  // 0.5 -> 0, 1.5 -> 2, 2.5 -> 2 (ties to even), then + 1; -3 + 1 saturates to 0; 1001 to 255.
  EXPECT_EQ(std::vector<int>(q, q + 5), (std::vector<int>{1, 3, 3, 0, 255}));
  auto back = evaluate_op("DequantizeLinear", {&y.value()[0], &scale, &zero}, {}, 13);
  ASSERT_TRUE(back.is_ok());
  EXPECT_FLOAT_EQ(back.value()[0].data<float>()[1], 2.0f);
}

TEST(Quantization, DynamicRangeIncludesZero) {
  const Tensor x = floats({3}, {1.0f, 2.0f, 2.55f});
  auto r = evaluate_op("DynamicQuantizeLinear", {&x}, {}, 11, 3);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_FLOAT_EQ(r.value()[1].data<float>()[0], 2.55f / 255.0f);  // range [0, 2.55]
  EXPECT_EQ(r.value()[2].data<uint8_t>()[0], 0);
  EXPECT_EQ(r.value()[0].data<uint8_t>()[2], 255);
}

TEST(Windows, HannIsZeroAtTheEdgesAndOneInTheMiddle) {
  const Tensor size = Tensor::from_vector<int64_t>(DType::kInt64, {}, {5});
  auto w = evaluate_op("HannWindow", {&size}, {{"periodic", ir::Attribute::of_int(0)}}, 17);
  ASSERT_TRUE(w.is_ok()) << w.status().to_string();
  const float* v = w.value()[0].data<float>();
  EXPECT_NEAR(v[0], 0.0f, 1e-7);
  EXPECT_NEAR(v[2], 1.0f, 1e-7);
  EXPECT_NEAR(v[1], 0.5f, 1e-7);
}

}  // namespace
}  // namespace kiln::ops
