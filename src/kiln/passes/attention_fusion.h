// attention_fusion: replaces scaled dot-product attention as exporters write it,
//   MatMul(Q [or Q / c], Kt) -> [Div or Mul by a scalar] -> [Where(mask, fill, .) or Add(bias)] ->
//   Softmax(last axis) -> MatMul(., V)
// by one kiln.Attention node. Every intermediate must be read by the next step alone (no graph
// output, no other reader), so the scores never need to exist outside the fused kernel.
#pragma once

#include "kiln/ir/graph.h"
#include "kiln/passes/pass_context.h"
#include "kiln/status.h"

namespace kiln::passes {

Result<bool> fuse_attention(ir::Graph& graph, const PassContext& ctx);

}  // namespace kiln::passes
