// ArgMax/ArgMin of a dense float tensor along one axis, viewed as [outer, count, inner] (the axis
// is count): for each (outer, inner) position, the index along the axis of the largest (smallest)
// value, the first one on ties or the last with `last`. Comparisons are the reference kernel's
// (ops/reduce.cpp): a NaN is never better than the current best.
#pragma once

#include <cstdint>

namespace kiln::providers::cpu {

struct ArgExtreme {
  bool largest = true;  // ArgMax; false: ArgMin
  bool last = false;    // select_last_index
  int64_t outer = 1, count = 1, inner = 1;
};

// y[o, i] = the index c of the extreme x[o, c, i]; threads from OpenMP when the input is large.
void arg_extreme(const ArgExtreme& a, const float* x, int64_t* y);

}  // namespace kiln::providers::cpu
