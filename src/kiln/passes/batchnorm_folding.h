// batchnorm_folding: folds an inference-mode BatchNormalization into the Conv before it, when the
// conv's weights and bias and the norm's scale, bias, mean and variance are all constants:
//   W'[m] = W[m] * s[m],  b'[m] = (b[m] - mean[m]) * s[m] + beta[m],  s = gamma / sqrt(var + eps).
// Float32 only (the folded weights are computed in double and rounded once). The conv output must
// be read by the norm alone; training-mode norms (extra outputs) are left as they are.
#pragma once

#include "kiln/ir/graph.h"
#include "kiln/passes/pass_context.h"
#include "kiln/status.h"

namespace kiln::passes {

Result<bool> fold_batchnorms(ir::Graph& graph, const PassContext& ctx);

}  // namespace kiln::passes
