// NonMaxSuppression's kernel, shared by the reference and the cpu provider: the greedy selection
// of each (batch, class) is independent, so the caller says how to run them (in order, or on its
// threads); the triples are written in batch, class, then selection order either way.
#pragma once

#include "kiln/ops/op_registry.h"
#include "kiln/ops/task_runner.h"

namespace kiln::ops {

// Selects the boxes and writes output 0 ([selected, 3] int64, already sized by the shape rule).
Status non_max_suppression(KernelContext& ctx, const TaskRunner& run);

}  // namespace kiln::ops
