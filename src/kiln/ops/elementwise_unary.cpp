// Op family elementwise_unary (filled in by its owner).
#include "kiln/ops/op_families.h"
#include "kiln/ops/op_registry.h"

namespace kiln::ops {

void register_elementwise_unary_ops(OpRegistry& /*r*/) {}

}  // namespace kiln::ops
