// Clip's bounds and element function, shared by the reference kernel (elementwise_unary.cpp) and
// the cpu provider's loop for bounds known only when the model runs: written once.
#pragma once

#include <limits>
#include <utility>

#include "kiln/ops/elementwise_math.h"
#include "kiln/ops/family_support.h"

namespace kiln::ops {

// Clip bounds: attributes `min`/`max` before opset 11, optional scalar inputs from 11 on.
template <class T>
Result<std::pair<Compute<T>, Compute<T>>> clip_bounds(const KernelContext& ctx) {
  using C = Compute<T>;
  C lo = std::numeric_limits<C>::lowest(), hi = std::numeric_limits<C>::max();
  if (ctx.opset() < 11) {
    if constexpr (std::is_floating_point_v<C>) {
      // Clip-6 defaults to the float range, Clip-1 to no bound.
      const float limit = ctx.opset() >= 6 ? std::numeric_limits<float>::max() : std::numeric_limits<float>::infinity();
      lo = static_cast<C>(ctx.node().attr_float("min", -limit));
      hi = static_cast<C>(ctx.node().attr_float("max", limit));
      return std::pair{lo, hi};
    }
    return ctx.error("Clip before opset 11 takes floating-point inputs only");
  }
  for (size_t i = 1; i <= 2; ++i) {
    const Tensor* bound = ctx.input(i);
    if (!bound) continue;
    if (bound->element_count() != 1 || bound->dtype() != dtype_of<T>())
      return ctx.error("Clip bound input " + std::to_string(i) + " must be a scalar of the input's type");
    (i == 1 ? lo : hi) = load(bound->data<T>()[0]);
  }
  return std::pair{lo, hi};
}

// v limited to [lo, hi]; the comparisons keep NaN as NaN.
template <class V>
V clip_value(V v, V lo, V hi) {
  return elementwise_math::clamp_nan(v, lo, hi);  // the element-wise table's Clip: NaN passes
}

}  // namespace kiln::ops
