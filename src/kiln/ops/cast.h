// Cast's element conversion between numeric and bool types, shared by the reference kernel
// (cast.cpp, which adds strings) and the cpu provider's parallel loop: written once. Floats to
// integers truncate toward zero and saturate (NaN gives 0); integers to integers wrap, as numpy's
// astype does; float -> bfloat16 truncates, as the ONNX 1.12 backend test data expects. To the
// 8-bit floats: round to nearest even, saturating unless Cast's `saturate` is 0 (ir/float8.h); to
// the 4-bit integers: floats round to the nearest integer, then every value keeps its low 4 bits
// (ONNX's "rounding and truncating"). Ties round away from zero, as ONNX Runtime 1.30 does (ONNX's
// int4 notes say ties to even; Kiln's outputs are held to ONNX Runtime's).
#pragma once

#include <cmath>
#include <cstdint>
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
To convert_number(const From& v, bool saturate = true) {
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else if constexpr (std::is_same_v<To, bool>) {
    return load(v) != 0;
  } else if constexpr (ir::is_float8_v<To>) {
    return ir::to_float8<To>(static_cast<float>(load(v)), saturate);
  } else if constexpr (is_int4_v<To>) {
    int64_t i = 0;
    if constexpr (std::is_integral_v<Compute<From>>) i = static_cast<int64_t>(load(v));
    else i = saturating_cast<int64_t>(std::round(static_cast<double>(load(v))));
    const auto low = static_cast<uint8_t>(i & 0x0F);
    if constexpr (std::is_same_v<To, Int4>) return Int4{static_cast<int8_t>((low ^ 0x08) - 0x08)};
    else return UInt4{low};
  } else if constexpr (std::is_same_v<To, BFloat16>) {
    return truncate_to_bfloat16(static_cast<float>(load(v)));
  } else if constexpr (std::is_integral_v<To> && !std::is_integral_v<Compute<From>>) {
    return saturating_cast<To>(static_cast<double>(load(v)));
  } else {
    return store<To>(load(v));
  }
}

// Cast's and CastLike's `saturate` attribute (opset 19 on; 1 when absent).
inline bool cast_saturates(const ir::Node& node) { return node.opset_version < 19 || node.attr_int("saturate", 1) != 0; }

}  // namespace kiln::ops
