// dead_code_elimination: removes nodes none of whose outputs is used (by a node, a subgraph reading
// it by name, or as a graph output), then values and initializers nothing uses any more.
#pragma once

#include "kiln/ir/graph.h"
#include "kiln/passes/pass_context.h"
#include "kiln/status.h"

namespace kiln::passes {

Result<bool> eliminate_dead_code(ir::Graph& graph, const PassContext& ctx);

}  // namespace kiln::passes
