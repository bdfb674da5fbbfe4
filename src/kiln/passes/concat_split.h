// concat_split: removes channel Concats that feed convolutions, so the concatenated tensor is never
// written. A convolution is linear in its input channels, so
//   Conv(Concat(A1..An, axis=1), W, b) = Conv(A1, W[:, c1], b) + Conv(A2, W[:, c2]) + ... ,
// where ci are the channels each Ai covers; product_fusion then folds each Add into the next conv
// as a residual (oneDNN's sum post-op). Per-channel pools are moved in front of such a Concat
// first (MaxPool(Concat(A, B)) = Concat(MaxPool(A), MaxPool(B))), which is how SqueezeNet's fire
// modules reach their next squeeze conv. Only ungrouped Convs with constant float weights split,
// and only when the Concat has no other reader.
#pragma once

#include "kiln/ir/graph.h"
#include "kiln/passes/pass_context.h"
#include "kiln/status.h"

namespace kiln::passes {

Result<bool> split_concat_convolutions(ir::Graph& graph, const PassContext& ctx);

}  // namespace kiln::passes
