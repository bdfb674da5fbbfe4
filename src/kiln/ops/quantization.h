// Quantization arithmetic shared by the reference kernels (quantization.cpp) and the cpu
// provider's: rounding half to even with saturation, and DynamicQuantizeLinear's scale and zero
// point, all in float as the spec's function body computes them. Written once.
#pragma once

#include <cmath>
#include <cstdint>

#include "kiln/ops/family_support.h"

namespace kiln::ops {

// round_half_to_even(v) + zero_point, saturated into Q (NaN gives 0).
template <class Q, class V>
Q round_and_saturate(V v, int64_t zero_point) {
  return saturating_cast<Q>(static_cast<double>(std::nearbyint(v)) + static_cast<double>(zero_point));
}

// DynamicQuantizeLinear over data whose range, with 0 included, is [lo, hi]: the uint8 range
// [0, 255] stretched over it.
struct DynamicQuantization {
  float scale = 0;
  uint8_t zero_point = 0;
  uint8_t quantize(float x) const { return round_and_saturate<uint8_t>(x / scale, zero_point); }
};

inline DynamicQuantization dynamic_quantization(float lo, float hi) {
  DynamicQuantization q;
  q.scale = (hi - lo) / 255.0f;
  q.zero_point = round_and_saturate<uint8_t>(0.0f - lo / q.scale, 0);
  return q;
}

}  // namespace kiln::ops
