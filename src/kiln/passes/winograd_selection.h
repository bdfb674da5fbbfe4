// winograd_selection: marks 3x3 stride-1 convolutions for Winograd's minimal filtering
// (attribute algorithm = "winograd" on kiln.FusedConv), which computes them with about half the
// multiplications of the direct method, at a slightly different rounding (the transforms add
// float sums; error stays near 1e-6 relative). Only for targets that have such kernels
// (PassContext::winograd: the cpu provider on an AVX-512 machine) and convolutions they take:
// ungrouped, undilated, constant weights, input and output channels multiples of 16, no residual,
// no activation but Relu. The mark is a preference: the cpu kernel, built for concrete shapes and
// a thread count, runs Winograd only where the work per thread pays for the transforms, and then
// reorders activations into and out of oneDNN's blocked layout at its edges; the report counts
// those reorders for each plan (memory.kernel_reorders).
// `--disable-pass winograd_selection` keeps every convolution direct.
#pragma once

#include "kiln/ir/graph.h"
#include "kiln/passes/pass_context.h"
#include "kiln/status.h"

namespace kiln::passes {

// Whether the winograd form of `conv` (a kiln.FusedConv) is eligible, ignoring PassContext.
bool winograd_eligible(const ir::Node& conv);

Result<bool> select_winograd(ir::Graph& graph, const PassContext& ctx);

}  // namespace kiln::passes
