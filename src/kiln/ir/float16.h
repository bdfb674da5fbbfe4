// Conversions between float and the 16-bit float formats (IEEE half, bfloat16).
#pragma once

#include <cstdint>
#include <cstring>

#include "kiln/tensor.h"

namespace kiln::ir {

inline float bits_to_float(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}
inline uint32_t float_to_bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

inline float to_float(Float16 h) {
  const uint32_t sign = static_cast<uint32_t>(h.bits & 0x8000u) << 16;
  const uint32_t exp = (h.bits >> 10) & 0x1fu;
  uint32_t mant = h.bits & 0x3ffu;
  if (exp == 0) {
    if (mant == 0) return bits_to_float(sign);
    int e = -1;  // subnormal: normalise
    do {
      ++e;
      mant <<= 1;
    } while ((mant & 0x400u) == 0);
    return bits_to_float(sign | static_cast<uint32_t>(127 - 15 - e) << 23 | (mant & 0x3ffu) << 13);
  }
  if (exp == 31) return bits_to_float(sign | 0x7f800000u | mant << 13);
  return bits_to_float(sign | (exp + 127 - 15) << 23 | mant << 13);
}

// Round to nearest even, as numpy's astype(float16) does.
inline Float16 to_float16(float f) {
  const uint32_t x = float_to_bits(f);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  const uint32_t abs = x & 0x7fffffffu;
  Float16 h;
  if (abs >= 0x7f800000u) {  // inf or nan
    h.bits = sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u : 0u);
    return h;
  }
  if (abs >= 0x477ff000u) {  // rounds to >= 65520: overflow to inf
    h.bits = sign | 0x7c00u;
    return h;
  }
  if (abs < 0x38800000u) {  // subnormal half or zero
    const float magic = bits_to_float(0x3f000000u);  // 0.5: shifts mantissa into place with RNE
    const float v = bits_to_float(abs) + magic;
    h.bits = sign | static_cast<uint16_t>(float_to_bits(v) - float_to_bits(magic));
    return h;
  }
  const uint32_t mant_odd = (abs >> 13) & 1u;
  uint32_t v = abs + 0xc8000fffu + mant_odd;  // rebias exponent (-112 << 23) and round
  h.bits = sign | static_cast<uint16_t>(v >> 13);
  return h;
}

inline float to_float(BFloat16 b) { return bits_to_float(static_cast<uint32_t>(b.bits) << 16); }

// Round to nearest even (NaN stays NaN).
inline BFloat16 to_bfloat16(float f) {
  const uint32_t x = float_to_bits(f);
  BFloat16 b;
  if ((x & 0x7fffffffu) > 0x7f800000u) {
    b.bits = static_cast<uint16_t>((x >> 16) | 0x40u);
    return b;
  }
  b.bits = static_cast<uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
  return b;
}

}  // namespace kiln::ir
