// The 8-bit float conversions (ir/float8.h) against ONNX's float8 notes: every finite code reads
// back to itself, ties round to even, and out-of-range values follow ONNX's Cast table.
#include "kiln/ir/float8.h"

#include <gtest/gtest.h>

#include <cmath>

namespace kiln::ir {
namespace {

template <class F>
void expect_every_finite_code_round_trips() {
  constexpr Float8Format f = float8_format<F>();
  for (int code = 0; code < 256; ++code) {
    const float v = float8_bits_to_float(static_cast<uint8_t>(code), f);
    if (std::isnan(v) || std::isinf(v)) continue;
    const uint8_t back = float_to_float8_bits(v, f, true);
    if (v == 0 && !f.unsigned_zero) {
      EXPECT_EQ(back, code) << "signed zero " << code;
    } else {
      EXPECT_EQ(back, code) << "code " << code << " = " << v;
    }
  }
}

TEST(Float8, EveryFiniteCodeRoundTrips) {
  expect_every_finite_code_round_trips<Float8E4M3FN>();
  expect_every_finite_code_round_trips<Float8E4M3FNUZ>();
  expect_every_finite_code_round_trips<Float8E5M2>();
  expect_every_finite_code_round_trips<Float8E5M2FNUZ>();
}

TEST(Float8, LargestValuesAndSpecialCodes) {
  EXPECT_EQ(to_float(Float8E4M3FN{0x7E}), 448.0f);
  EXPECT_EQ(to_float(Float8E4M3FNUZ{0x7F}), 240.0f);
  EXPECT_EQ(to_float(Float8E5M2{0x7B}), 57344.0f);
  EXPECT_EQ(to_float(Float8E5M2FNUZ{0x7F}), 57344.0f);
  EXPECT_TRUE(std::isnan(to_float(Float8E4M3FN{0x7F})));
  EXPECT_TRUE(std::isnan(to_float(Float8E4M3FNUZ{0x80})));  // negative zero's bits are the NaN
  EXPECT_TRUE(std::isinf(to_float(Float8E5M2{0xFC})));
  EXPECT_TRUE(std::isnan(to_float(Float8E5M2{0x7D})));
  EXPECT_EQ(to_float(Float8E4M3FN{0x01}), std::ldexp(1.0f, -9));  // smallest subnormal
  EXPECT_EQ(to_float(Float8E5M2FNUZ{0x01}), std::ldexp(1.0f, -17));
}

TEST(Float8, TiesRoundToEven) {
  // E4M3 in [1, 2) steps by 1/8: 1 + 1/16 -> 1 (mantissa 000), 1 + 3/16 -> 1.25 (mantissa 010).
  EXPECT_EQ(to_float(to_float8<Float8E4M3FN>(1.0625f)), 1.0f);
  EXPECT_EQ(to_float(to_float8<Float8E4M3FN>(1.1875f)), 1.25f);
  // E5M2 steps by 1/4: 1.125 -> 1, 1.375 -> 1.5.
  EXPECT_EQ(to_float(to_float8<Float8E5M2>(1.125f)), 1.0f);
  EXPECT_EQ(to_float(to_float8<Float8E5M2>(1.375f)), 1.5f);
  // Subnormal ties: half the smallest E4M3FN subnormal -> 0, 1.5 of it -> 2 of it.
  EXPECT_EQ(to_float8<Float8E4M3FN>(std::ldexp(1.0f, -10)).bits, 0x00);
  EXPECT_EQ(to_float8<Float8E4M3FN>(std::ldexp(3.0f, -10)).bits, 0x02);
  // 464 is halfway between 448 (mantissa 110) and the NaN code: it stays 448 either way.
  EXPECT_EQ(to_float8<Float8E4M3FN>(464.0f, false).bits, 0x7E);
}

TEST(Float8, OutOfRangeFollowsTheCastTable) {
  const float inf = INFINITY;
  // Saturating: beyond the largest finite value (and infinity) give it, with the sign.
  EXPECT_EQ(to_float8<Float8E4M3FN>(1e6f).bits, 0x7E);
  EXPECT_EQ(to_float8<Float8E4M3FN>(-inf).bits, 0xFE);
  EXPECT_EQ(to_float8<Float8E5M2>(inf).bits, 0x7B);
  EXPECT_EQ(to_float8<Float8E4M3FNUZ>(-1e6f).bits, 0xFF);
  // Not saturating: NaN, or infinity for E5M2; 480 rounds past 448.
  EXPECT_EQ(to_float8<Float8E4M3FN>(480.0f, false).bits & 0x7F, 0x7F);
  EXPECT_EQ(to_float8<Float8E4M3FN>(inf, false).bits, 0x7F);
  EXPECT_EQ(to_float8<Float8E5M2>(-1e6f, false).bits, 0xFC);
  EXPECT_EQ(to_float8<Float8E5M2>(61440.0f, false).bits, 0x7C);
  EXPECT_EQ(to_float8<Float8E5M2FNUZ>(1e6f, false).bits, 0x80);
  EXPECT_EQ(to_float8<Float8E4M3FNUZ>(std::nanf("")).bits, 0x80);
}

TEST(Float8, UnsignedZeroFormatsHaveNoNegativeZero) {
  EXPECT_EQ(to_float8<Float8E4M3FNUZ>(-0.0f).bits, 0x00);
  EXPECT_EQ(to_float8<Float8E5M2FNUZ>(-1e-30f).bits, 0x00);
  EXPECT_EQ(to_float8<Float8E4M3FN>(-0.0f).bits, 0x80);
  EXPECT_EQ(to_float8<Float8E5M2>(-1e-30f).bits, 0x80);
}

}  // namespace
}  // namespace kiln::ir
