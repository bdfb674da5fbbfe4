// vector_math.h against libm: erf within 3e-7, exp within 2 ulp-ish relative error over its whole range, sigmoid
// and tanh within a few float epsilons (absolute) and relative near zero, saturation without NaN.
#include "kiln/providers/cpu/vector_math.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace kiln::testing {
namespace {

using providers::cpu::exp_vectorisable;

std::vector<float> sweep(float lo, float hi, int count) {
  std::vector<float> x;
  for (int i = 0; i <= count; ++i) x.push_back(lo + (hi - lo) * static_cast<float>(i) / static_cast<float>(count));
  return x;
}

TEST(VectorMath, ExpMatchesLibmOverItsRange) {
  for (float x : sweep(-87.0f, 88.0f, 200000)) {
    const double want = std::exp(static_cast<double>(x));
    EXPECT_NEAR(exp_vectorisable(x) / want, 1.0, 3e-7) << "x = " << x;
  }
  EXPECT_GT(exp_vectorisable(-1000.0f), 0.0f);
  EXPECT_TRUE(std::isfinite(exp_vectorisable(1000.0f)));
}

TEST(VectorMath, SigmoidAndTanhMatchLibmAndSaturate) {
  std::vector<float> x = sweep(-30.0f, 30.0f, 120001);
  for (float v : {-1e30f, -200.0f, -1e-6f, 0.0f, 1e-6f, 200.0f, 1e30f, std::numeric_limits<float>::max()}) x.push_back(v);
  std::vector<float> s = x, t = x;
  providers::cpu::sigmoid_in_place(s.data(), static_cast<int64_t>(s.size()));
  providers::cpu::tanh_in_place(t.data(), static_cast<int64_t>(t.size()));
  for (size_t i = 0; i < x.size(); ++i) {
    const double v = x[i];
    const double want_s = 1.0 / (1.0 + std::exp(-v)), want_t = std::tanh(v);
    EXPECT_NEAR(s[i], want_s, 3e-7 + 3e-7 * want_s) << "sigmoid x = " << v;
    EXPECT_NEAR(t[i], want_t, 4e-7 + 1e-6 * std::fabs(want_t)) << "tanh x = " << v;
    if (std::fabs(v) < 1.0 && v != 0) {
      EXPECT_NEAR(t[i] / want_t, 1.0, 2e-6) << "tanh relative, x = " << v;
    }
  }
}

TEST(VectorMath, ErfMatchesLibm) {
  for (float x : sweep(-6.0f, 6.0f, 240001)) {
    const double want = std::erf(static_cast<double>(x));
    EXPECT_NEAR(providers::cpu::erf_vectorisable(x), want, 3e-7 + 2e-7 * std::fabs(want)) << "x = " << x;
    if (std::fabs(x) < 0.5f && x != 0) {
      EXPECT_NEAR(providers::cpu::erf_vectorisable(x) / want, 1.0, 1e-6) << "relative, x = " << x;
    }
  }
  EXPECT_EQ(providers::cpu::erf_vectorisable(0.0f), 0.0f);
  EXPECT_NEAR(providers::cpu::erf_vectorisable(1e30f), 1.0f, 1e-7);
}

TEST(VectorMath, SinAndCosMatchLibmAndHandLargeArgumentsToIt) {
  std::vector<float> x = sweep(-1000.0f, 1000.0f, 400001);
  for (float v : {1e-6f, -3e-7f, 8191.0f, 8193.0f, 1e6f, -3e7f, std::numeric_limits<float>::infinity(), std::nanf("")})
    x.push_back(v);
  std::vector<float> s(x.size()), c(x.size());
  providers::cpu::sin_of(x.data(), s.data(), static_cast<int64_t>(x.size()));
  providers::cpu::cos_of(x.data(), c.data(), static_cast<int64_t>(x.size()));
  for (size_t i = 0; i < x.size(); ++i) {
    const double v = x[i];
    if (!std::isfinite(v)) {
      EXPECT_TRUE(std::isnan(s[i]) && std::isnan(c[i])) << "x = " << v;
      continue;
    }
    EXPECT_NEAR(s[i], std::sin(v), 2e-7) << "sin x = " << v;
    EXPECT_NEAR(c[i], std::cos(v), 2e-7) << "cos x = " << v;
  }
  EXPECT_NEAR(s[s.size() - 8] / 1e-6, 1.0, 1e-6);  // relative near zero
}

}  // namespace
}  // namespace kiln::testing
