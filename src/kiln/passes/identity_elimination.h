// identity_elimination: removes Identity nodes and inference-mode Dropout (mask unused, training
// mode absent or constant false) by making their readers read the input directly. When the output
// is a graph output its name is kept: the input's producer is made to write the output instead, if
// the input is only read by this node; otherwise the node stays. Outputs that subgraphs capture by
// name are never replaced.
#pragma once

#include "kiln/ir/graph.h"
#include "kiln/passes/pass_context.h"
#include "kiln/status.h"

namespace kiln::passes {

Result<bool> eliminate_identities(ir::Graph& graph, const PassContext& ctx);

}  // namespace kiln::passes
