// legacy_forms: rewrites the opset 1-8 forms of element-wise ops and BatchNormalization as their
// current versions, so that every provider's kernels for those run them (the reference keeps
// running the old forms as they are, when a rewrite does not apply):
//   - Add, Sub, Mul, Div, Pow, And, Or, Xor, Equal, Greater, Less before opset 7: `broadcast` 1
//     aligns B with A at `axis`; B is reshaped (a constant in place, else by a Reshape) to the
//     shape numpy broadcasting aligns the same way (its dims, then 1s), and the node becomes
//     version 7; `broadcast` 0 (equal shapes) needs no reshape;
//   - PRelu before 7: a 1-D slope is per channel (axis 1): reshaped to [C, 1, ...];
//   - Sum, Max, Min, Mean before 8 (equal shapes): version 8;
//   - BatchNormalization before 9 with `spatial` 1 (the default) in inference: version 9.
// `consumed_inputs`, `is_test` and `spatial` are dropped. B's (or the slope's) shape must be known.
#pragma once

#include "kiln/ir/graph.h"
#include "kiln/passes/pass_context.h"
#include "kiln/status.h"

namespace kiln::passes {

Result<bool> modernise_legacy_forms(ir::Graph& graph, const PassContext& ctx);

}  // namespace kiln::passes
