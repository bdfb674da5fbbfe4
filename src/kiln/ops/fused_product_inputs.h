// The inputs of Kiln's fused products (kiln.FusedConv, kiln.FusedMatMul): (X or A, W or B, bias,
// residual); the passes that make them and the kernels that run them read them by these indices.
#pragma once

#include <cstddef>

namespace kiln::ops {

inline constexpr size_t kFusedBiasInput = 2, kFusedResidualInput = 3;

}  // namespace kiln::ops
