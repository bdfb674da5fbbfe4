// half_in_float: for providers without float16 kernels (the cpu provider), ops on float16 tensors
// compute in float32, as ONNX Runtime's CPU provider does: every node whose floating-point tensors
// are all float16 (and that has no dtype attribute) is retyped to float32; its float16 constants
// become float32 constants, a float16 value it reads from a node that stays float16 (the model's
// own Cast) is cast up once, and each output that a float16 reader or the graph's outputs need is
// cast back down. Between converted nodes values stay float32 (no rounding to float16 there).
// Runs before partition, when the session's preferred provider asks for it
// (ops::GraphForm::kHalfInFloat), since that provider cannot place float16 ops otherwise.
#pragma once

#include "kiln/ir/graph.h"
#include "kiln/passes/pass_context.h"
#include "kiln/status.h"

namespace kiln::passes {

Result<bool> compute_half_in_float(ir::Graph& graph, const PassContext& ctx);

}  // namespace kiln::passes
