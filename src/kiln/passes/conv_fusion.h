// conv_fusion: folds what follows a convolution into it. Conv + Add of a same-shaped residual +
// an activation (Relu, Clip with constant bounds, LeakyRelu, Sigmoid, Tanh, Elu, HardSigmoid,
// HardSwish) becomes one kiln.FusedConv, which providers run as a single kernel (oneDNN post-ops).
// Only a conv output read by nothing else is folded; the fused node lists every node it replaced.
#pragma once

#include "kiln/ir/graph.h"
#include "kiln/passes/pass_context.h"
#include "kiln/status.h"

namespace kiln::passes {

Result<bool> fuse_convolutions(ir::Graph& graph, const PassContext& ctx);

}  // namespace kiln::passes
