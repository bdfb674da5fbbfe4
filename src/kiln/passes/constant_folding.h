// constant_folding: evaluates, with the op's reference kernel, every node whose inputs are all
// constants, and turns its outputs into constants (same names) and drops the node. Left alone:
// nodes with subgraphs, random ops, ops the registry does not know (partitioning reports those),
// nodes whose outputs have no concrete tensor type, and nodes whose outputs would exceed
// PassContext::max_folded_bytes. A kernel that fails on the constant inputs would fail identically
// at every run, so its error is returned (naming the node) instead of being deferred to run time;
// only UnsupportedOperator leaves the node unfolded (for partitioning to place or report).
#pragma once

#include "kiln/ir/graph.h"
#include "kiln/passes/pass_context.h"
#include "kiln/status.h"

namespace kiln::passes {

Result<bool> fold_constants(ir::Graph& graph, const PassContext& ctx);

}  // namespace kiln::passes
