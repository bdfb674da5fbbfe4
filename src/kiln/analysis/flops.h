// Estimated floating-point operations of one node, for the report's fallback share in FLOPs and
// the benchmark's achieved GFLOP/s: 2 per multiply-add of Conv, MatMul, Gemm and their fused forms
// (plus one per output element of a fused epilogue), one per output element for other ops.
// Symbolic dims count as 1, so a dynamic model's figure is per unit of each symbol.
#pragma once

#include <cstdint>

#include "kiln/ir/graph.h"

namespace kiln::analysis {

int64_t estimate_flops(const ir::Node& node);

// Whether `node` is a Transpose into or out of a channels-last region of `graph` (the layout
// reorders the report counts).
bool is_layout_boundary(const ir::Graph& graph, const ir::Node& node);

}  // namespace kiln::analysis
