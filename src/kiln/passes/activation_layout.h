// activation_layout: runs convolution regions in the activation layout the target's convolutions
// are fastest on (PassContext::activation_layouts: the cpu provider's oneDNN kernels). A lowering
// pass: it runs after partition, and only nodes the provider runs (PassContext::owns) join regions.
// A region is a connected set of convolutions (on 4-d or 3-d float tensors) and pools (4-d), with the
// layout-agnostic ops between them (activations, element-wise ops on same-shaped tensors or
// scalars, Concat, Split, inference BatchNormalization, PRelu with a constant per-channel slope,
// kiln.ChannelShuffle in channels-last regions: DenseNet's Concat -> BatchNormalization -> Relu ->
// Conv stays in one layout). Each region gets one layout (ops/activation_layout.h): the first of the
// provider's preferred layouts it fits, a blocked one (NCHW16c, NCHW8c) when its block divides
// every channel count in the region (a convolution may still read a narrow input of at most 4
// channels, an image, channels-first), NHWC whatever the counts; a region of 1-D convolutions
// takes only channels-last (NWC, still named NHWC); none: it stays as it is. Where a region takes
// channels-last because a preferred block does not divide all its channel counts, its connected
// parts of two or more convolutions that the block fits still take the block. Conv and
// kiln.FusedConv become FusedConv with that layout; pooling ops and BatchNormalization are wrapped
// in kiln.InLayout;
// Concat's and Split's axis follows the layout (a blocked Split's sizes count channel blocks).
// Reorders (kiln.Relayout into and out of blocked layouts,
// Transposes for NHWC) are inserted only where a region meets the rest of the graph, each value
// converted at most once per layout, and the channels-first originals are left to dead-code
// elimination.
#pragma once

#include "kiln/ir/graph.h"
#include "kiln/passes/pass_context.h"
#include "kiln/status.h"

namespace kiln::passes {

Result<bool> choose_activation_layouts(ir::Graph& graph, const PassContext& ctx);

}  // namespace kiln::passes
