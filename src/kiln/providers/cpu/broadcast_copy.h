// Numpy-broadcast copy of a tensor into a larger one: the Expand kernel, and the first step of a
// binary op whose operands are both broadcast. Dims are collapsed into runs that are either copied
// or broadcast; each output row is one memcpy or one fill, and rows are spread over OpenMP threads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kiln/tensor.h"

namespace kiln::providers::cpu {

// Writes `src` (numpy-broadcastable to `dst`'s shape) into every element of `dst`. Both have the
// same fixed-size dtype (not strings) and do not overlap.
void broadcast_copy(const Tensor& src, Tensor& dst);

}  // namespace kiln::providers::cpu
