// Quantization arithmetic shared by the reference kernels (quantization.cpp) and the cpu
// provider's: rounding half to even with saturation, DynamicQuantizeLinear's scale and zero point
// (in float as the spec's function body computes them), the requantization of an integer
// accumulator, and how a scale or zero point maps onto the data. Written once.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "kiln/ir/graph.h"
#include "kiln/ops/family_support.h"
#include "kiln/status.h"

namespace kiln::ops {

// round_half_to_even(v) + zero_point, saturated into Q (NaN gives 0).
template <class Q, class V>
Q round_and_saturate(V v, int64_t zero_point) {
  return saturating_cast<Q>(static_cast<double>(std::nearbyint(v)) + static_cast<double>(zero_point));
}

// The types QuantizeLinear gives and DequantizeLinear reads, by the opset that added them: 8-bit
// integers (10), 8-bit floats (19), 16-bit and 4-bit integers (21).
using LinearQuantizedTypes = ConcatTypes<TypeList<int8_t, uint8_t, int16_t, uint16_t>, NarrowTypes>;

inline bool is_linear_quantized(DType d, int opset) {
  if (d == DType::kInt8 || d == DType::kUInt8) return true;
  if (list_has(Float8Types{}, d)) return opset >= 19;
  return opset >= 21 && list_has(LinearQuantizedTypes{}, d);
}

// One QuantizeLinear element: x / scale (`scaled`) rounded half to even, plus the zero point,
// saturated into Q; into an 8-bit float, `scaled` rounded to nearest even (the zero point is 0 for
// these), saturating unless the node's `saturate` is 0.
template <class Q>
Q quantize_element(double scaled, int64_t zero_point, bool saturate) {
  if constexpr (ir::is_float8_v<Q>) return ir::to_float8<Q>(static_cast<float>(scaled), saturate);
  else if constexpr (is_int4_v<Q>) return store<Q>(std::nearbyint(scaled) + static_cast<double>(zero_point));  // NaN gives 0
  else return round_and_saturate<Q>(scaled, zero_point);
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

// Multiplier of the requantizing ops, in float like the ONNX reference: a_scale * b_scale / y_scale.
inline float requant_multiplier(float a_scale, float b_scale, float y_scale) { return a_scale * b_scale / y_scale; }

// An integer accumulator requantized: saturate(round(acc * multiplier) + zero_point).
template <class Q>
Q requantize(int64_t acc, float multiplier, int64_t zero_point) {
  return round_and_saturate<Q>(static_cast<double>(acc) * static_cast<double>(multiplier), zero_point);
}

// How a scale or zero point maps onto data: one value for the tensor (count 1), one per index of
// an axis (element e uses value (e / inner) % count), or (opset 21) one per block of `block`
// consecutive indices of an axis of `axis_length`, the parameter shaped like the data but for
// ceil(axis_length / block) on the axis.
struct ParamLayout {
  int64_t count = 1, inner = 1;
  int64_t axis_length = 1, block = 0;
  int64_t at(int64_t e) const {
    if (count == 1) return 0;
    if (block == 0) return (e / inner) % count;
    const int64_t blocks = (axis_length + block - 1) / block;
    const int64_t outer = e / (axis_length * inner), index = (e / inner) % axis_length;
    return (outer * blocks + index / block) * inner + e % inner;
  }
};

// The layout of `count` values over `data` along `axis`: one value, or data[axis] values;
// InvalidModel naming the node and `what` otherwise.
Result<ParamLayout> axis_layout(const ir::Node& node, const std::vector<int64_t>& data, int64_t axis, int64_t count,
                                const std::string& what);

// QuantizeLinear's and DequantizeLinear's for a parameter of shape `param` over `data`: per
// tensor, (opset 13 on) per index of the `axis` attribute's axis, or (opset 21, block_size > 0)
// per block of that axis.
Result<ParamLayout> linear_param_layout(const ir::Node& node, const std::vector<int64_t>& data,
                                        const std::vector<int64_t>& param, const std::string& what);

}  // namespace kiln::ops
