// Derivative rules: for one forward node, the gradients of its inputs given the gradients of its
// outputs (reverse-mode automatic differentiation), emitted as plain ai.onnx nodes.
#pragma once

#include <vector>

#include "kiln/autodiff/gradient_builder.h"
#include "kiln/ir/graph.h"
#include "kiln/status.h"

namespace kiln::autodiff {

// output_grads[i] is the gradient flowing into output i (nullptr: it does not reach y). The result
// holds one entry per input, nullptr where the input receives no gradient. UnsupportedOperator when
// the op has no derivative rule.
Result<std::vector<ir::Value*>> input_gradients(GradientBuilder& b, const ir::Node& node,
                                                const std::vector<ir::Value*>& output_grads);

}  // namespace kiln::autodiff
