// Estimated floating-point operations of one node, for the report's fallback share in FLOPs: 2 per multiply-add of Conv, MatMul, Gemm and their fused forms
// (plus one per output element of a fused epilogue), one per output element for other ops.
// Symbolic dims count as 1, so a dynamic model's figure is per unit of each symbol.
#pragma once

#include <cstdint>

#include "kiln/ir/graph.h"

namespace kiln::analysis {

int64_t estimate_flops(const ir::Node& node);

}  // namespace kiln::analysis
