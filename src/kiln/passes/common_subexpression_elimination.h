// common_subexpression_elimination: merges nodes that compute the same thing (same op, domain,
// opset, inputs and deeply equal attributes) and constants with the same dtype, shape and bytes;
// readers of the duplicate then read the first one. Never merged: nodes with subgraphs, random ops,
// graph inputs and outputs (their names must stay), and values subgraphs capture by name.
#pragma once

#include "kiln/ir/graph.h"
#include "kiln/passes/pass_context.h"
#include "kiln/status.h"

namespace kiln::passes {

Result<bool> eliminate_common_subexpressions(ir::Graph& graph, const PassContext& ctx);

}  // namespace kiln::passes
