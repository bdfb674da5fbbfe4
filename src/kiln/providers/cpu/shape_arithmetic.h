// Shape arithmetic on the cpu provider: the integer and boolean ops that dynamic-shape exports use
// to compute sizes at run time (Shape -> Gather -> Unsqueeze -> Concat -> Reshape, masks built
// with Equal/Where/Expand, ...). They touch a handful of elements, so cpu runs them with the
// reference kernels (plain, exact loops) rather than declining them to a fallback provider: a
// model whose float work cpu takes then runs on cpu alone. Float tensors never qualify (Shape and
// Size may read one, since they only look at its dims).
#pragma once

#include "kiln/ir/graph.h"
#include "kiln/ops/op_registry.h"
#include "kiln/status.h"

namespace kiln::providers::cpu {

bool is_shape_arithmetic(const ir::Node& node);

// The reference kernel for a node is_shape_arithmetic accepts.
Result<ops::Kernel> shape_arithmetic_kernel(const ir::Node& node);

}  // namespace kiln::providers::cpu
