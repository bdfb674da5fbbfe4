// The numpy-broadcasting loop of the element-wise families: visits every output element with the
// matching linear offset of each operand. The innermost dimension runs as a plain strided loop.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "kiln/ops/op_helpers.h"

namespace kiln::ops {

// Calls body(out_index, offsets) for every element of `out_shape` in row-major order, where
// offsets[k] indexes operand k (of shape in_shapes[k], broadcast to out_shape).
template <size_t N, class Body>
void for_each_broadcast(const std::vector<int64_t>& out_shape, const std::array<std::vector<int64_t>, N>& in_shapes,
                        Body&& body) {
  const int64_t total = shape_element_count(out_shape);
  if (total <= 0) return;
  const bool scalar = out_shape.empty();
  const int64_t inner = scalar ? 1 : out_shape.back();
  const std::vector<int64_t> outer_shape(out_shape.begin(), out_shape.end() - (scalar ? 0 : 1));
  std::vector<std::vector<int64_t>> outer_strides(N);
  std::array<int64_t, N> inner_stride{};
  for (size_t k = 0; k < N; ++k) {
    std::vector<int64_t> s = broadcast_strides(in_shapes[k], out_shape);
    inner_stride[k] = scalar ? 0 : s.back();
    outer_strides[k].assign(s.begin(), s.end() - (scalar ? 0 : 1));
  }
  BroadcastIterator it(outer_shape, outer_strides);
  std::array<int64_t, N> offsets{};
  for (int64_t o = 0, outer = total / inner; o < outer; ++o, it.next()) {
    for (int64_t j = 0; j < inner; ++j) {
      for (size_t k = 0; k < N; ++k) offsets[k] = it.offset(k) + j * inner_stride[k];
      body(o * inner + j, offsets);
    }
  }
}

// `t` broadcast to `shape`, flattened, as doubles (a normalization's scale and bias over the
// normalized dims); nullptr gives `fill`. Empty when it does not broadcast.
inline std::vector<double> broadcast_doubles(const Tensor* t, const std::vector<int64_t>& shape, double fill) {
  std::vector<double> out(static_cast<size_t>(shape_element_count(shape)), fill);
  if (!t) return out;
  auto b = broadcast_static(shape, t->shape());
  if (!b.is_ok() || b.value() != shape) return {};
  const std::vector<double> values = as_doubles(*t);
  for_each_broadcast<1>(shape, {t->shape()}, [&](int64_t i, const std::array<int64_t, 1>& off) {
    out[static_cast<size_t>(i)] = values[static_cast<size_t>(off[0])];
  });
  return out;
}

}  // namespace kiln::ops
