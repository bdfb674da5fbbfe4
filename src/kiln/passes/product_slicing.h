// product_slicing: a MatMul or kiln.FusedMatMul with constant 2-D weights whose output is read only
// by Slices of its last axis (ViT's packed Q, K, V projection, cut into three) becomes one product
// per Slice, over those columns of the weights and bias: the Slices' copies disappear and the
// products cost what the one did. Products with a residual input stay.
#pragma once

#include "kiln/ir/graph.h"
#include "kiln/passes/pass_context.h"
#include "kiln/status.h"

namespace kiln::passes {

Result<bool> slice_products(ir::Graph& graph, const PassContext& ctx);

}  // namespace kiln::passes
