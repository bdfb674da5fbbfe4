// shape_folding: Shape and Size nodes whose reported dims are static (as analysis inferred them),
// and Gathers of Shape outputs that pick only static dims, become int64 constants, so the shape
// arithmetic that follows (Unsqueeze, Concat feeding a Reshape) folds away in constant_folding.
#pragma once

#include "kiln/ir/graph.h"
#include "kiln/passes/pass_context.h"
#include "kiln/status.h"

namespace kiln::passes {

Result<bool> fold_shapes(ir::Graph& graph, const PassContext& ctx);

}  // namespace kiln::passes
