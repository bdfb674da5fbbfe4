// Per-op run-time totals for the report, summed over runs from the executor's step timings.
#pragma once

#include <vector>

#include "kiln/report/report.h"
#include "kiln/runtime/executor.h"

namespace kiln::runtime {

// Adds `timings` into `totals` (one entry per op type, a body's kernels included, each step's time
// without its bodies') and keeps `totals` sorted slowest first.
void accumulate_op_times(const std::vector<StepTiming>& timings, std::vector<report::OpTime>& totals);

}  // namespace kiln::runtime
