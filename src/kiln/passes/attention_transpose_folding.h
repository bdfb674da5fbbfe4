// attention_transpose_folding: the Transposes that feed a kiln.Attention (Q, Kt, V split into
// heads: BERT's [B,S,H,D] -> [B,H,S,D], ViT's [S,H,D] -> [H,S,D]) and the one that merges its
// heads back become the attention's operand permutations (ops/attention.h), so that the kernel
// reads and writes those layouts in place instead of copying them. A Transpose is folded only when
// the attention is its one reader (or, for the output, its one reader is the Transpose).
#pragma once

#include "kiln/ir/graph.h"
#include "kiln/passes/pass_context.h"
#include "kiln/status.h"

namespace kiln::passes {

Result<bool> fold_attention_transposes(ir::Graph& graph, const PassContext& ctx);

}  // namespace kiln::passes
