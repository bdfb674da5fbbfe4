// subnormal_flushing: float32 constants whose magnitudes are below FLT_MIN (subnormal numbers)
// become zeros of the same sign. A product with such a weight is at most 1.2e-38 times the
// activation, far below the rounding of any float32 result it is added to, but x86 cores take a
// microcode assist on every such operand: trained models carry them (fr_landmark's last Linear
// layer: 31% of its weights, and its GEMV ran ten times slower). float16 and float64 constants are
// left alone (float16's subnormals, 6e-8 to 6e-5, are values that matter).
#pragma once

#include "kiln/ir/graph.h"
#include "kiln/passes/pass_context.h"
#include "kiln/status.h"

namespace kiln::passes {

Result<bool> flush_subnormal_constants(ir::Graph& graph, const PassContext& ctx);

}  // namespace kiln::passes
