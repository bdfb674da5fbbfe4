// GroupNormalization (opsets 18 and 21): the channels of X [N, C, ...] in num_groups groups, each
// group normalised by its own mean and variance (population, in double, two passes), then scaled
// and shifted per group (opset 18's scale and bias of num_groups values) or per channel (opset
// 21's of C values). One definition for the reference kernel and the cpu provider's.
#pragma once

#include <cmath>
#include <cstdint>

#include "kiln/ops/family_support.h"

namespace kiln::ops {

// Normalises group `g` of one image: `channels` channels of `spatial` values each, contiguous at
// x and y. scale and bias hold one value per group (per_channel false: index g) or per channel
// (index g * channels + c).
template <class T>
void normalize_group(const T* x, T* y, int64_t g, int64_t channels, int64_t spatial, const double* scale, const double* bias,
                     bool per_channel, double epsilon) {
  const int64_t n = channels * spatial;
  double mean = 0, var = 0;  // SIMD reductions: the sums vectorise (in double, in any order)
#pragma omp simd reduction(+ : mean)
  for (int64_t i = 0; i < n; ++i) mean += load(x[i]);
  mean /= static_cast<double>(n);
#pragma omp simd reduction(+ : var)
  for (int64_t i = 0; i < n; ++i) {
    const double d = load(x[i]) - mean;
    var += d * d;
  }
  var /= static_cast<double>(n);
  const double inv = 1.0 / std::sqrt(var + epsilon);
  for (int64_t c = 0; c < channels; ++c) {
    const int64_t p = per_channel ? g * channels + c : g;
    const double s = scale[p] * inv, b = bias[p];
#pragma omp simd
    for (int64_t i = c * spatial; i < (c + 1) * spatial; ++i) y[i] = store<T>((load(x[i]) - mean) * s + b);
  }
}

}  // namespace kiln::ops
