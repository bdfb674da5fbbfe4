// The reduction engine shared by the Reduce* ops and MeanVarianceNormalization: one pass over the
// input folding every element into the accumulator of its output position.
#pragma once

#include <cstdint>
#include <vector>

#include "kiln/ops/op_helpers.h"

namespace kiln::ops {

// Shape of a reduction's result with reduced dims kept as 1.
inline std::vector<int64_t> kept_shape(const std::vector<int64_t>& shape, const std::vector<bool>& reduced) {
  std::vector<int64_t> out(shape);
  for (size_t d = 0; d < shape.size(); ++d)
    if (reduced[d]) out[d] = 1;
  return out;
}

// Returns one state per element of kept_shape(shape, reduced) (row-major), starting at `init` and
// updated as state = step(state, in[i]) for every input element i that maps to it.
template <class State, class T, class Step>
std::vector<State> accumulate(const T* in, const std::vector<int64_t>& shape, const std::vector<bool>& reduced,
                              State init, Step step) {
  const std::vector<int64_t> out_shape = kept_shape(shape, reduced);
  std::vector<State> states(static_cast<size_t>(std::max<int64_t>(shape_element_count(out_shape), 0)), init);
  std::vector<int64_t> strides = contiguous_strides(out_shape);
  for (size_t d = 0; d < shape.size(); ++d)
    if (reduced[d]) strides[d] = 0;
  const int64_t n = shape_element_count(shape);
  BroadcastIterator it(shape, {strides});
  for (int64_t i = 0; i < n; ++i, it.next()) {
    State& s = states[static_cast<size_t>(it.offset(0))];
    s = step(s, in[i]);
  }
  return states;
}

}  // namespace kiln::ops
