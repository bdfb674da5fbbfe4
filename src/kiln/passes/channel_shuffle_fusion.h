// channel_shuffle_fusion: ShuffleNet's channel shuffle, Reshape(x [N, C, ...] -> [N, g, C/g, ...])
// -> Transpose(perm [0, 2, 1, 3, ...]) -> Reshape(-> [N, C, ...]), becomes one kiln.ChannelShuffle
// (ops/channel_shuffle.h) when both intermediate values are read by the next node alone and every
// shape is known. One op instead of three lets activation_layout keep a channels-last region
// through the shuffle (fp_pose: 16 shuffles, each reordered to channels-first and back before).
#pragma once

#include "kiln/ir/graph.h"
#include "kiln/passes/pass_context.h"
#include "kiln/status.h"

namespace kiln::passes {

Result<bool> fuse_channel_shuffles(ir::Graph& graph, const PassContext& ctx);

}  // namespace kiln::passes
