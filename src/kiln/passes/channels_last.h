// channels_last: makes convolution regions channels-last for providers whose convolutions are
// fastest that way (PassContext::channels_last; oneDNN's direct and brgemm kernels). Conv and
// kiln.FusedConv become FusedConv with layout NHWC; pooling ops are wrapped in kiln.ChannelsLast;
// element-wise ops on same-shaped tensors, and Concat (axis remapped), follow their inputs' layout.
// Transposes are inserted only where the region meets the rest of the graph (each value is
// transposed at most once), and the channels-first originals are left to dead-code elimination.
#pragma once

#include "kiln/ir/graph.h"
#include "kiln/passes/pass_context.h"
#include "kiln/status.h"

namespace kiln::passes {

Result<bool> convert_to_channels_last(ir::Graph& graph, const PassContext& ctx);

}  // namespace kiln::passes
