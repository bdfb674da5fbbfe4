// Reduction of the middle dim of a dense float tensor viewed as [outer, count, inner] (a channel
// reduction of NCHW: outer N, count C, inner HW): each of the `count` rows of `inner` elements is
// folded into a row of accumulators, block by block, so that every load is contiguous and
// vectorised; with inner 1 (an innermost reduction) each row folds into one value. oneDNN 2.6
// folds only the innermost dims fast, and not the norms (L1, L2, sum of squares) even there: its
// reference implementation is slower than Kiln's own reference kernel.
#pragma once

#include <cstdint>

namespace kiln::providers::cpu {

// How each element enters its accumulator, and how the accumulated value becomes the output.
// kLogSumExp: log(sum(exp(x))), computed as max + log(sum(exp(x - max))) in two passes (its
// finish is implied).
enum class MiddleFold { kSum, kProduct, kMax, kMin, kAbsoluteSum, kSquareSum, kLogSumExp };
enum class MiddleFinish { kNone, kMean, kSquareRoot, kLog };

struct MiddleReduction {
  MiddleFold fold = MiddleFold::kSum;
  MiddleFinish finish = MiddleFinish::kNone;
  int64_t outer = 1, count = 1, inner = 1;
};

// y[o, i] = finish(fold over c of x[o, c, i]); threads from OpenMP when the input is large. Max
// and Min give NaN when any element folded is NaN (numpy's rule, the reference kernel's).
void reduce_middle(const MiddleReduction& r, const float* x, float* y);

}  // namespace kiln::providers::cpu
