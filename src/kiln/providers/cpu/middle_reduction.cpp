// Middle-dim reductions: a block of accumulators per (outer, inner block), rows folded in order;
// with no inner dim, each row folded over a vector of accumulators. Log-sum-exp takes two passes:
// the maxima, then the sums of exp(x - max) with the maxima as each output's shift.
#include "kiln/providers/cpu/middle_reduction.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace kiln::providers::cpu {
namespace {

constexpr int64_t kBlock = 256;                      // accumulators per task: 1 KiB, in registers and L1
constexpr int64_t kMinParallelElements = 1 << 15;  // below this, thread start-up would dominate

template <MiddleFold F>
constexpr float initial() {
  if constexpr (F == MiddleFold::kProduct) return 1.0f;
  else if constexpr (F == MiddleFold::kMax) return -std::numeric_limits<float>::infinity();
  else if constexpr (F == MiddleFold::kMin) return std::numeric_limits<float>::infinity();
  else return 0.0f;
}

// An element as it enters its accumulator: exp(v - shift) for log-sum-exp's second pass.
template <MiddleFold F>
inline float entering(float v, float shift) {
  if constexpr (F == MiddleFold::kLogSumExp) return std::exp(v - shift);
  else return v;
}

template <MiddleFold F>
inline float step(float acc, float v) {
  if constexpr (F == MiddleFold::kSum || F == MiddleFold::kLogSumExp) return acc + v;
  else if constexpr (F == MiddleFold::kProduct) return acc * v;
  else if constexpr (F == MiddleFold::kMax) return v > acc || v != v ? v : acc;  // a NaN wins, as in numpy
  else if constexpr (F == MiddleFold::kMin) return v < acc || v != v ? v : acc;
  else if constexpr (F == MiddleFold::kAbsoluteSum) return acc + std::fabs(v);
  else return acc + v * v;
}

// How two partial accumulations combine.
template <MiddleFold F>
inline float combine(float a, float b) {
  if constexpr (F == MiddleFold::kProduct) return a * b;
  else if constexpr (F == MiddleFold::kMax || F == MiddleFold::kMin) return step<F>(a, b);
  else return a + b;
}

float finished(MiddleFinish finish, float v, float inverse_count) {
  switch (finish) {
    case MiddleFinish::kNone: return v;
    case MiddleFinish::kMean: return v * inverse_count;
    case MiddleFinish::kSquareRoot: return std::sqrt(v);
    case MiddleFinish::kLog: return std::log(v);
  }
  return v;
}

// The output from an accumulator: log-sum-exp adds back its shift (an infinite maximum is the
// result itself: log(sum(exp(x))) of only -inf is -inf, with any +inf it is +inf).
template <MiddleFold F>
inline float output(MiddleFinish finish, float acc, float shift, float inverse_count) {
  if constexpr (F == MiddleFold::kLogSumExp) return std::isinf(shift) ? shift : shift + std::log(acc);
  else return finished(finish, acc, inverse_count);
}

// `shift`: one value per output (log-sum-exp's maxima, which y may alias), else null.
template <MiddleFold F>
void reduce_blocks(const MiddleReduction& r, const float* x, float* y, const float* shift) {
  const int64_t blocks = (r.inner + kBlock - 1) / kBlock, tasks = r.outer * blocks;
  const float inverse_count = 1.0f / static_cast<float>(r.count);
  const bool parallel = r.outer * r.count * r.inner >= kMinParallelElements;
#pragma omp parallel for schedule(static) if (parallel)
  for (int64_t t = 0; t < tasks; ++t) {
    const int64_t o = t / blocks, begin = (t % blocks) * kBlock, n = std::min(kBlock, r.inner - begin);
    float acc[kBlock];
    for (int64_t i = 0; i < n; ++i) acc[i] = initial<F>();
    float shifts[kBlock] = {};
    if constexpr (F == MiddleFold::kLogSumExp) std::copy_n(shift + o * r.inner + begin, n, shifts);
    const float* rows = x + o * r.count * r.inner + begin;
    for (int64_t c = 0; c < r.count; ++c) {
      const float* row = rows + c * r.inner;
#pragma omp simd
      for (int64_t i = 0; i < n; ++i) acc[i] = step<F>(acc[i], entering<F>(row[i], shifts[i]));
    }
    float* out = y + o * r.inner + begin;
    for (int64_t i = 0; i < n; ++i) out[i] = output<F>(r.finish, acc[i], shifts[i], inverse_count);
  }
}

// inner == 1: each row of `count` elements folds into one value, over kLanes independent
// accumulators that the compiler keeps in one vector register.
template <MiddleFold F>
void reduce_rows(const MiddleReduction& r, const float* x, float* y, const float* shift) {
  constexpr int64_t kLanes = 16;
  const float inverse_count = 1.0f / static_cast<float>(r.count);
  const bool parallel = r.outer * r.count >= kMinParallelElements;
#pragma omp parallel for schedule(static) if (parallel)
  for (int64_t o = 0; o < r.outer; ++o) {
    const float* row = x + o * r.count;
    float s = 0;
    if constexpr (F == MiddleFold::kLogSumExp) s = shift[o];
    float lanes[kLanes];
    for (float& lane : lanes) lane = initial<F>();
    int64_t c = 0;
    for (; c + kLanes <= r.count; c += kLanes) {
#pragma omp simd
      for (int64_t l = 0; l < kLanes; ++l) lanes[l] = step<F>(lanes[l], entering<F>(row[c + l], s));
    }
    float acc = initial<F>();
    for (; c < r.count; ++c) acc = step<F>(acc, entering<F>(row[c], s));
    for (float lane : lanes) acc = combine<F>(acc, lane);
    y[o] = output<F>(r.finish, acc, s, inverse_count);
  }
}

template <MiddleFold F>
void reduce(const MiddleReduction& r, const float* x, float* y, const float* shift = nullptr) {
  if (r.inner == 1) reduce_rows<F>(r, x, y, shift);
  else reduce_blocks<F>(r, x, y, shift);
}

}  // namespace

void reduce_middle(const MiddleReduction& r, const float* x, float* y) {
  switch (r.fold) {
    case MiddleFold::kSum: return reduce<MiddleFold::kSum>(r, x, y);
    case MiddleFold::kProduct: return reduce<MiddleFold::kProduct>(r, x, y);
    case MiddleFold::kMax: return reduce<MiddleFold::kMax>(r, x, y);
    case MiddleFold::kMin: return reduce<MiddleFold::kMin>(r, x, y);
    case MiddleFold::kAbsoluteSum: return reduce<MiddleFold::kAbsoluteSum>(r, x, y);
    case MiddleFold::kSquareSum: return reduce<MiddleFold::kSquareSum>(r, x, y);
    case MiddleFold::kLogSumExp: {
      MiddleReduction maxima = r;
      maxima.finish = MiddleFinish::kNone;
      reduce<MiddleFold::kMax>(maxima, x, y);  // the maxima, in y
      return reduce<MiddleFold::kLogSumExp>(r, x, y, y);
    }
  }
}

}  // namespace kiln::providers::cpu
