// GridSample's kernel (opsets 16 and 20, sampling.cpp), shared by the reference and the cpu
// provider: each (image, channel) map is sampled at every grid point, in double, one task per map;
// the caller says how the tasks run (in order, or on its threads).
#pragma once

#include "kiln/ops/op_registry.h"
#include "kiln/ops/task_runner.h"

namespace kiln::ops {

// Samples input 0 at input 1's grid into output 0 (sized by the shape rule).
Status grid_sample(KernelContext& ctx, const TaskRunner& run);

}  // namespace kiln::ops
