// vector_math.h against libm: erf within 3e-7, exp within 2 ulp-ish relative error over its whole range, sigmoid
// and tanh within a few float epsilons (absolute) and relative near zero, saturation without NaN; the
// inverse trigonometric, hyperbolic and inverse hyperbolic functions and tan within a few ulp (relative,
// measured in double) over their domains, libm's answers at the edges (0, +-1, inf, NaN, outside the domain).
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

using ArrayFunction = void (*)(const float*, float*, int64_t);

// Arguments over [lo, hi] evenly and geometrically (down to 1e-30 in magnitude, where a function's
// small-argument form counts), with the edges every function must get right.
std::vector<float> arguments(float lo, float hi) {
  std::vector<float> x = sweep(lo, hi, 200000);
  for (float m = 1e-30f; m < std::max(std::fabs(lo), std::fabs(hi)); m *= 1.1f)
    for (float v : {m, -m})
      if (v >= lo && v <= hi) x.push_back(v);
  const float inf = std::numeric_limits<float>::infinity();
  for (float v : {0.0f, -0.0f, 1.0f, -1.0f, 0.5f, -0.5f, 1e-45f, 2.0f, -2.0f, 1e9f, 3e38f, -3e38f, inf, -inf, std::nanf("")})
    x.push_back(v);
  return x;
}

// `function` against `reference` (libm in double) within `ulps` float epsilons of relative error
// (absolute below `floor`); NaN, inf and signed zero where libm gives them.
void expect_matches(const char* name, ArrayFunction function, double (*reference)(double), float lo, float hi, double ulps,
                    double floor = 0) {
  const std::vector<float> x = arguments(lo, hi);
  std::vector<float> y(x.size());
  function(x.data(), y.data(), static_cast<int64_t>(x.size()));
  int failures = 0;
  for (size_t i = 0; i < x.size() && failures < 10; ++i) {
    const double want = static_cast<float>(reference(x[i]));
    bool ok;
    if (std::isnan(want)) ok = std::isnan(y[i]);
    else if (std::isinf(want)) ok = y[i] == want;
    else ok = std::fabs(y[i] - want) <= std::max(ulps * 1.1920929e-7 * std::fabs(want), floor) && !(want == 0 && std::signbit(want) != std::signbit(y[i]));
    if (!ok) ++failures;
    EXPECT_TRUE(ok) << name << "(" << x[i] << ") = " << y[i] << ", libm " << want;
  }
}

TEST(VectorMath, InverseTrigonometricFunctionsMatchLibm) {
  expect_matches("asin", providers::cpu::asin_of, [](double v) { return std::asin(v); }, -1.5f, 1.5f, 3);
  expect_matches("acos", providers::cpu::acos_of, [](double v) { return std::acos(v); }, -1.5f, 1.5f, 3);
  expect_matches("atan", providers::cpu::atan_of, [](double v) { return std::atan(v); }, -1e6f, 1e6f, 3);
}

TEST(VectorMath, TanMatchesLibm) {
  // Near its poles tan's value depends on the last bit of the reduction: checked with an absolute floor on a
  // coarse grid (tan(x) for x near an odd multiple of pi/2 is ill-conditioned).
  expect_matches("tan", providers::cpu::tan_of, [](double v) { return std::tan(static_cast<double>(static_cast<float>(v))); }, -20.0f, 20.0f,
                 8, 1e-6);
}

TEST(VectorMath, HyperbolicFunctionsMatchLibm) {
  expect_matches("sinh", providers::cpu::sinh_of, [](double v) { return std::sinh(v); }, -100.0f, 100.0f, 6);
  expect_matches("cosh", providers::cpu::cosh_of, [](double v) { return std::cosh(v); }, -100.0f, 100.0f, 6);
  expect_matches("asinh", providers::cpu::asinh_of, [](double v) { return std::asinh(v); }, -1e30f, 1e30f, 4);
  expect_matches("acosh", providers::cpu::acosh_of, [](double v) { return std::acosh(v); }, -10.0f, 1e30f, 4);
  expect_matches("atanh", providers::cpu::atanh_of, [](double v) { return std::atanh(v); }, -1.5f, 1.5f, 4);
}

TEST(VectorMath, SimpleFunctionsAndPredicatesMatchTheirDefinitions) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::nanf("");
  const std::vector<float> x = {-2.5f, -1.0f, -0.5f, -0.0f, 0.0f, 0.25f, 0.5f, 1.5f, 3.0f, inf, -inf, nan};
  const auto apply = [&](ArrayFunction f) {
    std::vector<float> y(x.size());
    f(x.data(), y.data(), static_cast<int64_t>(x.size()));
    return y;
  };
  const std::vector<float> sign = apply(providers::cpu::sign_of), floor = apply(providers::cpu::floor_of),
                           ceil = apply(providers::cpu::ceil_of), softsign = apply(providers::cpu::softsign_of);
  std::vector<float> shrink(x.size()), thresholded(x.size());
  providers::cpu::shrink_of(x.data(), shrink.data(), static_cast<int64_t>(x.size()), 0.5f, 0.25f);
  providers::cpu::thresholded_relu_of(x.data(), thresholded.data(), static_cast<int64_t>(x.size()), 0.5f);
  std::vector<char> isnan(x.size()), isinf(x.size()), isposinf(x.size());
  providers::cpu::isnan_of(x.data(), reinterpret_cast<bool*>(isnan.data()), static_cast<int64_t>(x.size()));
  providers::cpu::isinf_of(x.data(), reinterpret_cast<bool*>(isinf.data()), static_cast<int64_t>(x.size()), true, true);
  providers::cpu::isinf_of(x.data(), reinterpret_cast<bool*>(isposinf.data()), static_cast<int64_t>(x.size()), false, true);
  for (size_t i = 0; i < x.size(); ++i) {
    const float v = x[i];
    SCOPED_TRACE(v);
    if (std::isnan(v)) {
      EXPECT_TRUE(std::isnan(floor[i]) && std::isnan(ceil[i]) && std::isnan(softsign[i]));
    } else {
      EXPECT_EQ(sign[i], v > 0 ? 1.0f : v < 0 ? -1.0f : 0.0f);
      EXPECT_EQ(floor[i], std::floor(v));
      EXPECT_EQ(ceil[i], std::ceil(v));
      if (std::isinf(v)) {
        EXPECT_TRUE(std::isnan(softsign[i]));  // inf / inf, as the reference computes it
      } else {
        EXPECT_EQ(softsign[i], v / (1 + std::fabs(v)));
      }
      EXPECT_EQ(shrink[i], v < -0.5f ? v + 0.25f : v > 0.5f ? v - 0.25f : 0.0f);
      EXPECT_EQ(thresholded[i], v > 0.5f ? v : 0.0f);
    }
    EXPECT_EQ(isnan[i] != 0, std::isnan(v));
    EXPECT_EQ(isinf[i] != 0, std::isinf(v));
    EXPECT_EQ(isposinf[i] != 0, v == inf);
  }
}

}  // namespace
}  // namespace kiln::testing
