// Tests of the cpu provider's middle-dim reductions against a plain double-precision fold: every
// fold and finish, rows (inner 1) and blocks of columns, sizes that leave partial lanes and
// blocks, inputs large enough to run on several threads, and NaN through Max and Min.
#include "kiln/providers/cpu/middle_reduction.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace kiln::providers::cpu {
namespace {

double plain(MiddleFold fold, MiddleFinish finish, const std::vector<float>& x, const MiddleReduction& r, int64_t o,
             int64_t i) {
  double acc = fold == MiddleFold::kProduct ? 1 : fold == MiddleFold::kMax ? -INFINITY : fold == MiddleFold::kMin ? INFINITY : 0;
  for (int64_t c = 0; c < r.count; ++c) {
    const double v = x[static_cast<size_t>((o * r.count + c) * r.inner + i)];
    switch (fold) {
      case MiddleFold::kSum: acc += v; break;
      case MiddleFold::kProduct: acc *= v; break;
      case MiddleFold::kMax: acc = std::max(acc, v); break;
      case MiddleFold::kMin: acc = std::min(acc, v); break;
      case MiddleFold::kAbsoluteSum: acc += std::fabs(v); break;
      case MiddleFold::kSquareSum: acc += v * v; break;
    case MiddleFold::kLogSumExp: acc += std::exp(v); break;
    }
  }
  if (fold == MiddleFold::kLogSumExp) return std::log(acc);
  switch (finish) {
    case MiddleFinish::kNone: return acc;
    case MiddleFinish::kMean: return acc / static_cast<double>(r.count);
    case MiddleFinish::kSquareRoot: return std::sqrt(acc);
    case MiddleFinish::kLog: return std::log(acc);
  }
  return acc;
}

TEST(MiddleReduction, EveryFoldMatchesAPlainFoldOverRowsAndColumns) {
  const std::vector<std::pair<MiddleFold, MiddleFinish>> kinds = {
      {MiddleFold::kSum, MiddleFinish::kMean},          {MiddleFold::kSum, MiddleFinish::kLog},
      {MiddleFold::kProduct, MiddleFinish::kNone},      {MiddleFold::kMax, MiddleFinish::kNone},
      {MiddleFold::kMin, MiddleFinish::kNone},          {MiddleFold::kAbsoluteSum, MiddleFinish::kNone},
      {MiddleFold::kSquareSum, MiddleFinish::kSquareRoot}, {MiddleFold::kLogSumExp, MiddleFinish::kNone}};
  // (outer, count, inner): rows with a partial lane group, a block and a half of columns, and
  // inputs above the threading threshold both ways.
  const std::vector<MiddleReduction> shapes = {{MiddleFold::kSum, MiddleFinish::kNone, 3, 37, 1},
                                               {MiddleFold::kSum, MiddleFinish::kNone, 2, 5, 300},
                                               {MiddleFold::kSum, MiddleFinish::kNone, 64, 1000, 1},
                                               {MiddleFold::kSum, MiddleFinish::kNone, 4, 24, 700}};
  for (MiddleReduction r : shapes) {
    std::vector<float> x(static_cast<size_t>(r.outer * r.count * r.inner));
    // Positive, near 1: products and logs stay finite over a thousand elements.
    for (size_t k = 0; k < x.size(); ++k) x[k] = 1.0f + 0.001f * static_cast<float>(static_cast<int>(k * 7919 % 201) - 100);
    for (const auto& [fold, finish] : kinds) {
      r.fold = fold;
      r.finish = finish;
      std::vector<float> y(static_cast<size_t>(r.outer * r.inner), -1.0f);
      reduce_middle(r, x.data(), y.data());
      for (int64_t o = 0; o < r.outer; ++o)
        for (int64_t i = 0; i < r.inner; ++i) {
          const double want = plain(fold, finish, x, r, o, i);
          ASSERT_NEAR(y[static_cast<size_t>(o * r.inner + i)], want, 1e-5 + 1e-4 * std::fabs(want))
              << "fold " << static_cast<int>(fold) << " at " << o << "," << i << " of " << r.outer << "x" << r.count << "x" << r.inner;
        }
    }
  }
}

TEST(MiddleReduction, LogSumExpOfInfinitiesAndLargeValues) {
  const float inf = std::numeric_limits<float>::infinity();
  // Rows of 3: only -inf; a +inf; large values whose exp overflows float without the shift.
  const std::vector<float> x = {-inf, -inf, -inf, 1, inf, 2, 100, 100, 99};
  std::vector<float> y(3);
  reduce_middle({MiddleFold::kLogSumExp, MiddleFinish::kNone, 3, 3, 1}, x.data(), y.data());
  EXPECT_EQ(y[0], -inf);
  EXPECT_EQ(y[1], inf);
  EXPECT_NEAR(y[2], 100.0 + std::log(2.0 + std::exp(-1.0)), 1e-4);
}

TEST(MiddleReduction, MaxAndMinLetANaNThrough) {
  std::vector<float> x(40, 1.0f);
  x[21] = NAN;  // in row 1 of 2 rows of 20; in column 1 of 4 rows of 10 columns
  for (MiddleFold fold : {MiddleFold::kMax, MiddleFold::kMin}) {
    std::vector<float> rows(2);
    reduce_middle({fold, MiddleFinish::kNone, 2, 20, 1}, x.data(), rows.data());
    EXPECT_EQ(rows[0], 1.0f);
    EXPECT_TRUE(std::isnan(rows[1]));
    std::vector<float> columns(10);
    reduce_middle({fold, MiddleFinish::kNone, 1, 4, 10}, x.data(), columns.data());
    for (size_t i = 0; i < columns.size(); ++i) EXPECT_EQ(std::isnan(columns[i]), i == 1) << i;
  }
}

}  // namespace
}  // namespace kiln::providers::cpu
