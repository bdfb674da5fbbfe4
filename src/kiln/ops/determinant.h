// Det's kernel, shared by the reference and the cpu provider: each [M, M] matrix of the input's
// trailing dims gets its determinant by Gaussian elimination with partial pivoting, in double, one
// task per matrix; the caller says how the tasks run (in order, or on its threads).
#pragma once

#include "kiln/ops/op_registry.h"
#include "kiln/ops/task_runner.h"

namespace kiln::ops {

// The determinants of input 0's matrices into output 0 (its leading dims).
Status determinants(KernelContext& ctx, const TaskRunner& run);

}  // namespace kiln::ops
