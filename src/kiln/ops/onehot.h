// OneHot's depth input, read the same way by the shape rule, the reference kernel and the cpu
// provider: one element holding a whole number of classes, at least 1.
#pragma once

#include <string>

#include "kiln/status.h"
#include "kiln/tensor.h"

namespace kiln::ops {

template <class Context>
Result<int64_t> onehot_depth(const Context& ctx, const Tensor& depth) {
  if (depth.element_count() != 1) return ctx.error("depth must hold exactly one element, got shape " + shape_to_string(depth.shape()));
  const double d = element_as_double(depth, 0);
  if (!(d >= 1.0 && d <= 2147483647.0)) return ctx.error("depth must be a positive number of classes, got " + std::to_string(d));
  return static_cast<int64_t>(d);
}

}  // namespace kiln::ops
