// What a run of a plan allocates before its first kernel (the arena's growth and the outputs of
// static shape), checked against the current memory budget (ir/memory_budget.h) so that a run
// whose shapes would pass the limit is refused before it allocates anything.
#pragma once

#include <cstdint>
#include <vector>

#include "kiln/runtime/execution_plan.h"
#include "kiln/status.h"
#include "kiln/tensor.h"

namespace kiln::runtime {

// The bytes of the outputs a run of `plan` allocates up front (static shape, no bound target in
// `targets`).
int64_t planned_output_bytes(const ExecutionPlan& plan, const std::vector<Tensor>* targets = nullptr);

// OK when a run of `plan` on an executor whose arena holds `arena_capacity` bytes fits under the
// thread's current budget (or there is none). Else AllocationFailure naming the input shapes, the
// planned bytes (arena and outputs), the limit and what is in use, and the plan's largest buffers.
Status check_plan_fits_budget(const ExecutionPlan& plan, int64_t arena_capacity,
                              const std::vector<Tensor>* targets = nullptr);

}  // namespace kiln::runtime
