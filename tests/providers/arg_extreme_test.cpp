// Tests of the cpu provider's ArgMax/ArgMin loops against a plain scan: rows (inner 1) and blocks
// of columns, partial blocks, ties resolved to the first or last index, NaN never chosen over the
// current best (the reference's comparisons), and inputs large enough to run on several threads.
#include "kiln/providers/cpu/arg_extreme.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace kiln::providers::cpu {
namespace {

int64_t plain(const ArgExtreme& a, const std::vector<float>& x, int64_t o, int64_t i) {
  int64_t best = 0;
  for (int64_t c = 1; c < a.count; ++c) {
    const float v = x[static_cast<size_t>((o * a.count + c) * a.inner + i)];
    const float b = x[static_cast<size_t>((o * a.count + best) * a.inner + i)];
    const bool better = a.largest ? (v > b || (a.last && v == b)) : (v < b || (a.last && v == b));
    if (better) best = c;
  }
  return best;
}

TEST(ArgExtreme, MatchesAPlainScanOverRowsAndColumns) {
  const std::vector<ArgExtreme> shapes = {{true, false, 3, 37, 1}, {true, false, 2, 5, 300}, {true, false, 64, 1000, 1},
                                          {true, false, 4, 24, 700}};
  for (ArgExtreme a : shapes) {
    std::vector<float> x(static_cast<size_t>(a.outer * a.count * a.inner));
    for (size_t k = 0; k < x.size(); ++k) x[k] = static_cast<float>(k * 7919 % 13);  // many ties
    x[5] = NAN;
    for (bool largest : {true, false})
      for (bool last : {false, true}) {
        a.largest = largest;
        a.last = last;
        std::vector<int64_t> y(static_cast<size_t>(a.outer * a.inner), -1);
        arg_extreme(a, x.data(), y.data());
        for (int64_t o = 0; o < a.outer; ++o)
          for (int64_t i = 0; i < a.inner; ++i)
            ASSERT_EQ(y[static_cast<size_t>(o * a.inner + i)], plain(a, x, o, i))
                << (largest ? "max" : "min") << (last ? " last" : " first") << " at " << o << "," << i << " of " << a.outer
                << "x" << a.count << "x" << a.inner;
      }
  }
}

}  // namespace
}  // namespace kiln::providers::cpu
