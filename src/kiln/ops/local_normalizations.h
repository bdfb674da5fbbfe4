// LpNormalization and LRN, written once for the reference kernels and the cpu provider's: each
// normalises a small independent piece (one line along LpNormalization's axis; one channel plane
// of one image for LRN) in double, so a provider can run the pieces on its threads.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "kiln/ops/family_support.h"

namespace kiln::ops {

// LpNormalization of one line of n values `stride` apart: divided by its L1 or L2 norm; an
// all-zero line stays zero.
template <class T>
void lp_normalize_line(const T* x, T* y, int64_t n, int64_t stride, bool l1) {
  double norm = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double v = load(x[i * stride]);
    norm += l1 ? std::fabs(v) : v * v;
  }
  norm = l1 ? norm : std::sqrt(norm);
  for (int64_t i = 0; i < n; ++i) y[i * stride] = store<T>(norm == 0 ? 0.0 : load(x[i * stride]) / norm);
}

struct LrnParams {
  int64_t size = 1;
  double alpha = 1e-4, beta = 0.75, bias = 1.0;
};

// LRN's output plane for channel c of one image (x and y at its channel 0, `plane` values per
// channel): x / (bias + alpha / size * sum of x^2 over channels c - floor((size - 1) / 2) to
// c + ceil((size - 1) / 2))^beta. `squares` has room for `plane` doubles.
template <class T>
void lrn_plane(const T* x, T* y, int64_t channels, int64_t plane, int64_t c, const LrnParams& p, double* squares) {
  const int64_t before = (p.size - 1) / 2, after = p.size - 1 - before;
  std::fill(squares, squares + plane, 0.0);
  for (int64_t k = std::max<int64_t>(0, c - before); k <= std::min(channels - 1, c + after); ++k)
    for (int64_t i = 0; i < plane; ++i) {
      const double v = load(x[k * plane + i]);
      squares[i] += v * v;
    }
  const double scale = p.alpha / static_cast<double>(p.size);
  for (int64_t i = 0; i < plane; ++i) y[c * plane + i] = store<T>(load(x[c * plane + i]) / std::pow(p.bias + scale * squares[i], p.beta));
}

}  // namespace kiln::ops
