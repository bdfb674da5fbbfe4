// What the Shape op reads of its input, shared by its rule and by the shape-folding pass.
#pragma once

#include <cstdint>
#include <utility>

#include "kiln/ir/graph.h"

namespace kiln::ops {

// The [start, end) range of dims a Shape node returns for an input of `rank` (the start/end
// attributes of opset 15, negative values counted from the end, both clamped to [0, rank]).
std::pair<int64_t, int64_t> shape_op_range(const ir::Node& node, int64_t rank);

}  // namespace kiln::ops
