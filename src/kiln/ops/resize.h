// What the Resize family's reference kernel shares with the providers' kernels: the input taps of
// every output coordinate on every axis, following the node's mode, coordinate transformation,
// nearest rounding, scales or sizes and roi (ops/resize.cpp).
#pragma once

#include <cstdint>
#include <vector>

#include "kiln/ops/op_registry.h"
#include "kiln/status.h"

namespace kiln::ops {

// The input taps of one output coordinate on one axis.
struct AxisTaps {
  std::vector<int64_t> index;
  std::vector<double> weight;
  bool outside = false;  // tf_crop_and_resize sampled outside the input: use extrapolation_value
};

// For each axis of the Resize/Upsample call in `ctx` (its input 0 and output 0 allocated), the
// taps of each output coordinate.
Result<std::vector<std::vector<AxisTaps>>> resize_taps(KernelContext& ctx);

}  // namespace kiln::ops
