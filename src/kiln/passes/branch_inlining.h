// branch_inlining: an If whose condition is a constant (folded from shapes the session pins: an
// exporter's "batch of one" test) is replaced by the nodes of the branch it takes. Its body then
// runs as part of the graph (fused, planned and placed with it) instead of as a plan of its own
// on every call, and the other branch, which may not even fit these shapes, is gone.
#pragma once

#include "kiln/ir/graph.h"
#include "kiln/passes/pass_context.h"
#include "kiln/status.h"

namespace kiln::passes {

Result<bool> inline_constant_branches(ir::Graph& graph, const PassContext& ctx);

}  // namespace kiln::passes
