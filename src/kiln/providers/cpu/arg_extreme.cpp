// ArgMax/ArgMin: a block of (best value, best index) pairs per (outer, inner block), rows compared
// in order, so that every load is contiguous; with no inner dim, one pair per row.
#include "kiln/providers/cpu/arg_extreme.h"

#include <algorithm>

namespace kiln::providers::cpu {
namespace {

constexpr int64_t kBlock = 256;
constexpr int64_t kMinParallelElements = 1 << 15;

template <bool kLargest, bool kLast>
inline bool better(float v, float best) {
  if constexpr (kLargest) return kLast ? v >= best : v > best;
  else return kLast ? v <= best : v < best;
}

template <bool kLargest, bool kLast>
void arg_blocks(const ArgExtreme& a, const float* x, int64_t* y) {
  const int64_t blocks = (a.inner + kBlock - 1) / kBlock, tasks = a.outer * blocks;
  const bool parallel = a.outer * a.count * a.inner >= kMinParallelElements;
#pragma omp parallel for schedule(static) if (parallel)
  for (int64_t t = 0; t < tasks; ++t) {
    const int64_t o = t / blocks, begin = (t % blocks) * kBlock, n = std::min(kBlock, a.inner - begin);
    const float* rows = x + o * a.count * a.inner + begin;
    float best[kBlock];
    int64_t* index = y + o * a.inner + begin;
    std::copy_n(rows, n, best);
    std::fill_n(index, n, 0);
    for (int64_t c = 1; c < a.count; ++c) {
      const float* row = rows + c * a.inner;
      for (int64_t i = 0; i < n; ++i) {
        const bool b = better<kLargest, kLast>(row[i], best[i]);
        best[i] = b ? row[i] : best[i];
        index[i] = b ? c : index[i];
      }
    }
  }
}

template <bool kLargest, bool kLast>
void arg_rows(const ArgExtreme& a, const float* x, int64_t* y) {
  const bool parallel = a.outer * a.count >= kMinParallelElements;
#pragma omp parallel for schedule(static) if (parallel)
  for (int64_t o = 0; o < a.outer; ++o) {
    const float* row = x + o * a.count;
    int64_t index = 0;
    for (int64_t c = 1; c < a.count; ++c)
      if (better<kLargest, kLast>(row[c], row[index])) index = c;
    y[o] = index;
  }
}

template <bool kLargest, bool kLast>
void arg(const ArgExtreme& a, const float* x, int64_t* y) {
  if (a.inner == 1) arg_rows<kLargest, kLast>(a, x, y);
  else arg_blocks<kLargest, kLast>(a, x, y);
}

}  // namespace

void arg_extreme(const ArgExtreme& a, const float* x, int64_t* y) {
  if (a.largest) return a.last ? arg<true, true>(a, x, y) : arg<true, false>(a, x, y);
  return a.last ? arg<false, true>(a, x, y) : arg<false, false>(a, x, y);
}

}  // namespace kiln::providers::cpu
