// normalization_activation_fusion: a kiln.InLayout BatchNormalization (a convolution region's, as
// DenseNet's pre-activation BatchNormalization -> Relu -> Conv) whose output only a Relu reads takes
// that Relu as its fused activation (ops/activation.h), so one pass over the tensor normalises and
// rectifies (oneDNN's fused batch normalization and ReLU on cpu). A lowering pass: it runs after
// activation_layout, on the nodes the provider owns, before element-wise chains form.
#pragma once

#include "kiln/ir/graph.h"
#include "kiln/passes/pass_context.h"
#include "kiln/status.h"

namespace kiln::passes {

Result<bool> fuse_normalization_activations(ir::Graph& graph, const PassContext& ctx);

}  // namespace kiln::passes
