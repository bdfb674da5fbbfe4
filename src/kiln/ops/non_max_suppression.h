// NonMaxSuppression's kernel, shared by the reference and the cpu provider: the greedy selection
// of each (batch, class) is independent, so the caller says how to run them (in order, or on its
// threads); the triples are written in batch, class, then selection order either way.
#pragma once

#include <cstdint>
#include <functional>

#include "kiln/ops/op_registry.h"

namespace kiln::ops {

// Calls task(i) once for every i in [0, count), in any order, possibly concurrently.
using TaskRunner = std::function<void(int64_t count, const std::function<void(int64_t)>& task)>;

// Selects the boxes and writes output 0 ([selected, 3] int64, already sized by the shape rule).
Status non_max_suppression(KernelContext& ctx, const TaskRunner& run);

}  // namespace kiln::ops
