// product_fusion: folds what follows a Conv or MatMul into it (a Gemm that is a plain product with
// a bias row counts as a MatMul with its bias). A MatMul's constant bias Add (a
// 1-D tensor along the last dim), then an Add of a same-shaped residual, then an activation (Relu,
// Clip with constant bounds, LeakyRelu, Sigmoid, Tanh, Elu, HardSigmoid, HardSwish, kiln.Gelu)
// become one kiln.FusedConv or kiln.FusedMatMul, which providers run as a single kernel (oneDNN
// post-ops). Only an output read by nothing else is folded; the fused node lists every node it
// replaced.
#pragma once

#include "kiln/ir/graph.h"
#include "kiln/passes/pass_context.h"
#include "kiln/status.h"

namespace kiln::passes {

Result<bool> fuse_products(ir::Graph& graph, const PassContext& ctx);

}  // namespace kiln::passes
