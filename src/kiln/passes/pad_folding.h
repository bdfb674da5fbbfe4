// pad_folding: a Pad that adds zeros around the spatial dims of a Conv's input only, read by that
// Conv alone, becomes part of the Conv's own pads (ONNX Conv pads with zeros too):
//   Conv(Pad(x, [0, 0, t, l, 0, 0, b, r]), pads [t', l', b', r']) = Conv(x, pads [t' + t, l' + l, b' + b, r' + r]).
// TensorFlow exports write ZeroPadding2D before every strided depthwise convolution (mlsd's
// MobileNetV2 blocks); as a separate node the Pad also splits the convolution region around it
// (activation_layout), costing a reorder out of and back into the region's layout. Pads must be
// constants, non-negative, zero on N and C; the mode constant with value 0 (or none); the Conv's
// auto_pad NOTSET or VALID.
#pragma once

#include "kiln/ir/graph.h"
#include "kiln/passes/pass_context.h"
#include "kiln/status.h"

namespace kiln::passes {

Result<bool> fold_pads(ir::Graph& graph, const PassContext& ctx);

}  // namespace kiln::passes
