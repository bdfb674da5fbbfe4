// The cpu provider's own loop for RNN, GRU and LSTM (recurrent_loop.cpp), which the recurrent
// kernel table uses for GRU and RNN, and for an LSTM oneDNN's primitive cannot run fast.
#pragma once

#include "kiln/ir/graph.h"
#include "kiln/ops/op_registry.h"
#include "kiln/providers/provider.h"
#include "kiln/status.h"

namespace kiln::providers::cpu {

Capability recurrent_loop_supports(const ir::Node& node);
Result<ops::Kernel> build_recurrent_loop(const ir::Node& node);

}  // namespace kiln::providers::cpu
