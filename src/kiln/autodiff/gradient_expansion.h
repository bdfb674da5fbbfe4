// expand_gradients: replaces each Gradient node (ai.onnx.preview.training) of the main graph by the
// plain ai.onnx nodes that compute it, so providers only ever see ordinary ops. Gradient(xs, zs, y)
// outputs dy/dx for each x in xs, where y is a value of the graph computed from xs and zs; for a
// non-scalar y it is the gradient of the sum of y's elements (the backward pass seeded with ones),
// as in training frameworks. Runs after type inference (broadcast shapes decide the reductions);
// the caller infers types again for the new nodes.
#pragma once

#include "kiln/ir/graph.h"
#include "kiln/status.h"

namespace kiln::autodiff {

// Returns how many Gradient nodes were expanded. InvalidModel for a malformed Gradient (unknown
// xs, zs or y, inputs that are not xs followed by zs); UnsupportedOperator when an op between xs and
// y has no derivative rule.
Result<int> expand_gradients(ir::Model& model);

}  // namespace kiln::autodiff
