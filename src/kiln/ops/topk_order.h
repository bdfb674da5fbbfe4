// TopK's order, written once for the reference and every provider: larger values first (smaller
// ones when not `largest`), NaN beyond every number (as PyTorch's topk ranks it: first when
// largest, last otherwise), equal values by their lower index. A strict total order, so a partial
// sort gives the same k elements in the same order as a stable full sort.
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>

namespace kiln::ops {

template <class T>
bool topk_before(T a, int64_t a_index, T b, int64_t b_index, bool largest) {
  if constexpr (std::is_floating_point_v<T>) {
    const bool a_nan = std::isnan(a), b_nan = std::isnan(b);
    if (a_nan || b_nan) {
      if (a_nan && b_nan) return a_index < b_index;
      return largest ? a_nan : b_nan;
    }
  }
  if (a != b) return largest ? a > b : a < b;
  return a_index < b_index;
}

}  // namespace kiln::ops
