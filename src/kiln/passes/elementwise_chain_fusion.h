// elementwise_chain_fusion: a run of two or more element-wise ops, each reading the previous one's
// output (which nothing else reads) and keeping its type, becomes one kiln.ElementwiseChain
// (ops/elementwise_chain.h), so the tensor is read and written once instead of once per op.
// Steps are activations with constant parameters, unary math, and binary ops whose other operand
// broadcasts to the chain's shape without growing it. Runs after product_fusion, which folds an
// activation straight into the Conv or MatMul before it, and after channels_last, whose regions
// element-wise ops must be able to join first. Only for targets that run a chain in one pass
// (PassContext::elementwise_chains: the cpu provider). A lowering pass: it runs after partition and
// chains only nodes the provider runs (PassContext::owns).
#pragma once

#include "kiln/ir/graph.h"
#include "kiln/passes/pass_context.h"
#include "kiln/status.h"

namespace kiln::passes {

Result<bool> fuse_elementwise_chains(ir::Graph& graph, const PassContext& ctx);

}  // namespace kiln::passes
