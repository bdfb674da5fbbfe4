// MeanVarianceNormalization's kernel, shared by the reference and the cpu provider: every slice
// over the reduced `axes` (default [0, 2, 3]: each channel across the batch and the image) becomes
// (X - E[X]) / (sqrt(E[X^2] - E[X]^2) + 1e-9), the ONNX function body, in double, one task per
// slice; the caller says how the tasks run (in order, or on its threads).
#pragma once

#include <cstdint>
#include <vector>

#include "kiln/ops/op_registry.h"
#include "kiln/ops/task_runner.h"

namespace kiln::ops {

// Which of the node's `rank` axes it reduces; InvalidModel for an axis out of range.
Result<std::vector<bool>> mvn_axes(const ir::Node& node, int64_t rank);

// Input 0 normalised into output 0.
Status mean_variance_normalization(KernelContext& ctx, const TaskRunner& run);

}  // namespace kiln::ops
