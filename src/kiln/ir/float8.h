// Conversions between float and ONNX's four 8-bit float formats (opset 19):
//   E4M3FN   4 exponent bits (bias 7), 3 mantissa bits, NaN S.1111.111, no infinity, max 448
//   E4M3FNUZ bias 8, one zero, the only NaN is 0x80 (negative zero's bits), max 240
//   E5M2     bias 15, IEEE-like: infinity S.11111.00, NaNs above it, max 57344
//   E5M2FNUZ bias 16, one zero, NaN 0x80, max 57344
// Decoding is exact. Encoding rounds to nearest, ties to even; a value beyond the largest finite
// one (after rounding) becomes that value when saturating, else infinity (E5M2) or NaN (the
// others), and an infinity saturates to the largest finite value: ONNX's Cast table, as ONNX
// Runtime implements it (for the FNUZ formats too). The FNUZ formats have no negative zero: a
// negative value that rounds to zero gives +0. ONNX Runtime 1.30 leaves the table in two places
// when not saturating (E4M3FN: |x| in [480, 496) gives 448; E5M2: a value that rounds past 57344
// below 2^16 gives NaN); Kiln follows the table there.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "kiln/tensor.h"

namespace kiln::ir {

struct Float8Format {
  int mantissa_bits;
  int bias;
  bool unsigned_zero;  // FNUZ: no negative zero, 0x80 is the NaN
  bool has_infinity;   // E5M2: the code after the largest finite one is infinity
  uint8_t max_finite;  // the largest finite magnitude's bits
};

template <class T>
inline constexpr bool is_float8_v = std::is_same_v<T, Float8E4M3FN> || std::is_same_v<T, Float8E4M3FNUZ> ||
                                    std::is_same_v<T, Float8E5M2> || std::is_same_v<T, Float8E5M2FNUZ>;

template <class F>
  requires is_float8_v<F>
constexpr Float8Format float8_format() {
  if constexpr (std::is_same_v<F, Float8E4M3FN>) return {3, 7, false, false, 0x7E};
  else if constexpr (std::is_same_v<F, Float8E4M3FNUZ>) return {3, 8, true, false, 0x7F};
  else if constexpr (std::is_same_v<F, Float8E5M2>) return {2, 15, false, true, 0x7B};
  else return {2, 16, true, false, 0x7F};
}

inline float float8_bits_to_float(uint8_t bits, const Float8Format& f) {
  if (f.unsigned_zero && bits == 0x80) return std::nanf("");
  const uint8_t magnitude = bits & 0x7F;
  const float sign = (bits & 0x80) ? -1.0f : 1.0f;
  if (magnitude > f.max_finite) {
    if (f.has_infinity && magnitude == f.max_finite + 1) return sign * INFINITY;
    return std::nanf("");
  }
  const int exponent = magnitude >> f.mantissa_bits;
  const int mantissa = magnitude & ((1 << f.mantissa_bits) - 1);
  if (exponent == 0) return sign * std::ldexp(static_cast<float>(mantissa), 1 - f.bias - f.mantissa_bits);
  return sign * std::ldexp(static_cast<float>((1 << f.mantissa_bits) + mantissa), exponent - f.bias - f.mantissa_bits);
}

inline uint8_t float_to_float8_bits(float x, const Float8Format& f, bool saturate) {
  const uint8_t nan = f.unsigned_zero ? uint8_t{0x80} : uint8_t{0x7F};
  const uint8_t sign = std::signbit(x) ? 0x80 : 0x00;
  if (std::isnan(x)) return f.unsigned_zero ? nan : static_cast<uint8_t>(sign | nan);
  const uint8_t overflow = saturate ? f.max_finite
                           : f.has_infinity ? static_cast<uint8_t>(f.max_finite + 1)
                                            : nan;
  auto with_sign = [&](uint8_t magnitude) {
    if (magnitude == 0) return f.unsigned_zero ? uint8_t{0} : sign;
    if (f.unsigned_zero && magnitude == nan) return nan;
    return static_cast<uint8_t>(sign | magnitude);
  };
  if (std::isinf(x)) return with_sign(saturate ? f.max_finite : overflow);
  const double a = std::fabs(static_cast<double>(x));
  if (a == 0) return with_sign(0);
  // The spacing of the format's values around `a` (subnormal spacing below the smallest normal):
  // rounding a / quantum to an integer, ties to even, is rounding to the nearest value.
  int exp2 = 0;
  std::frexp(a, &exp2);
  const int min_exponent = 1 - f.bias;
  const int exponent = std::max(exp2 - 1, min_exponent);
  const int max_exponent = ((f.max_finite >> f.mantissa_bits) & 0x1F) - f.bias;
  if (exponent > max_exponent + 1) return with_sign(overflow);
  const double steps = std::nearbyint(std::ldexp(a, f.mantissa_bits - exponent));  // in [0, 2^(m+1)]
  const int64_t integer = static_cast<int64_t>(steps);
  int field = 0;
  int64_t mantissa = integer;
  if (exponent == min_exponent && integer < (int64_t{1} << f.mantissa_bits)) {
    field = 0;  // subnormal (or zero)
  } else if (integer == (int64_t{2} << f.mantissa_bits)) {
    field = exponent + f.bias + 1;  // rounded up into the next binade
    mantissa = 0;
  } else {
    field = exponent + f.bias;
    mantissa = integer - (int64_t{1} << f.mantissa_bits);
  }
  const int64_t magnitude = (static_cast<int64_t>(field) << f.mantissa_bits) | mantissa;
  if (magnitude > f.max_finite) return with_sign(overflow);
  return with_sign(static_cast<uint8_t>(magnitude));
}

template <class F>
  requires is_float8_v<F>
float to_float(F v) {
  return float8_bits_to_float(v.bits, float8_format<F>());
}

template <class F>
  requires is_float8_v<F>
F to_float8(float x, bool saturate = true) {
  F out;
  out.bits = float_to_float8_bits(x, float8_format<F>(), saturate);
  return out;
}

}  // namespace kiln::ir
