// gelu_fusion: recognises GELU as exporters write it and replaces it by one kiln.Gelu node.
//   erf form:  x * (erf(x / sqrt 2) + 1) * 0.5   (Div or Mul by 1/sqrt 2; the 0.5 on either side)
//   tanh form: x * 0.5 * (tanh(sqrt(2/pi) * (x + 0.044715 * x^3)) + 1)   (GPT-2's)
// The node that produced the result is replaced; the rest of the chain is left to dead-code
// elimination, so intermediate values other nodes read survive.
#pragma once

#include "kiln/ir/graph.h"
#include "kiln/passes/pass_context.h"
#include "kiln/status.h"

namespace kiln::passes {

Result<bool> fuse_gelu(ir::Graph& graph, const PassContext& ctx);

}  // namespace kiln::passes
