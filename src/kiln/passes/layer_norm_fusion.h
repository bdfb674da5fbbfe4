// layer_norm_fusion: replaces LayerNormalization written out with reductions (what exporters emit
// before opset 17) by one LayerNormalization node:
//   m = ReduceMean(x, trailing axes); d = x - m; v = ReduceMean(d^2 or d*d, same axes);
//   y = d / Sqrt(v + eps) [* gamma] [+ beta]
// The reduced axes must be the trailing ones; gamma and beta must be constants of those dims.
#pragma once

#include "kiln/ir/graph.h"
#include "kiln/passes/pass_context.h"
#include "kiln/status.h"

namespace kiln::passes {

Result<bool> fuse_layer_norm(ir::Graph& graph, const PassContext& ctx);

}  // namespace kiln::passes
