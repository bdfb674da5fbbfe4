// shape_folding: Shape and Size nodes whose input has a fully static type (as analysis inferred it)
// become int64 constants, so the shape arithmetic that follows (Gather, Unsqueeze, Concat feeding a
// Reshape) folds away in constant_folding.
#pragma once

#include "kiln/ir/graph.h"
#include "kiln/passes/pass_context.h"
#include "kiln/status.h"

namespace kiln::passes {

Result<bool> fold_shapes(ir::Graph& graph, const PassContext& ctx);

}  // namespace kiln::passes
