// Cast's element conversion between numeric and bool types, shared by the reference kernel
// (cast.cpp, which adds strings) and the cpu provider's parallel loop: written once. Floats to
// integers truncate toward zero and saturate (NaN gives 0); integers to integers wrap, as numpy's
// astype does; float -> bfloat16 truncates, as the ONNX 1.12 backend test data expects.
#pragma once

#include <cmath>
#include <type_traits>

#include "kiln/ops/family_support.h"

namespace kiln::ops {

inline BFloat16 truncate_to_bfloat16(float f) {
  BFloat16 b;
  b.bits = std::isnan(f) ? uint16_t{0x7fc0} : static_cast<uint16_t>(ir::float_to_bits(f) >> 16);
  return b;
}

// One element From -> To (neither a string).
template <class To, class From>
To convert_number(const From& v) {
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else if constexpr (std::is_same_v<To, bool>) {
    return load(v) != 0;
  } else if constexpr (std::is_same_v<To, BFloat16>) {
    return truncate_to_bfloat16(static_cast<float>(load(v)));
  } else if constexpr (std::is_integral_v<To> && !std::is_integral_v<Compute<From>>) {
    return saturating_cast<To>(static_cast<double>(load(v)));
  } else {
    return store<To>(load(v));
  }
}

}  // namespace kiln::ops
