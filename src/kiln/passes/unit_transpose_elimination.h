// unit_transpose_elimination: a Transpose that moves only size-1 dims (so every element keeps its
// place in memory: [1,197,768] -> [197,1,768], ViT's and PyTorch's sequence-first attention at
// batch 1) becomes a Reshape, which relabels its input's buffer instead of copying it. Needs the
// input's dims known: a symbolic dim counts as larger than 1.
#pragma once

#include <vector>

#include "kiln/ir/graph.h"
#include "kiln/passes/pass_context.h"
#include "kiln/status.h"

namespace kiln::passes {

// True when permuting `dims` by `perm` keeps the order of the dims that are not 1 (known or symbolic).
bool transpose_keeps_memory_order(const std::vector<ir::Dim>& dims, const std::vector<int64_t>& perm);

Result<bool> eliminate_unit_transposes(ir::Graph& graph, const PassContext& ctx);

}  // namespace kiln::passes
