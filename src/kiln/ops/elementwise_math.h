// The scalar definition of each element-wise function of the table (elementwise_functions.h),
// written once as a template over the compute type: the table instantiates it for float and
// double, and the standalone ONNX ops (elementwise_unary.cpp) for every type they take, so a fused
// step, a recurrent activation and the op it came from compute the same thing. Every function has
// one signature, f(x, b, alpha, beta): b is the other operand of a binary function, alpha and beta
// the parameters (unused ones are ignored).
#pragma once

#include <algorithm>
#include <cmath>
#include <numbers>
#include <type_traits>

namespace kiln::ops::elementwise_math {

template <class S> S relu(S x, S, S, S) { return x < S(0) ? S(0) : x; }
template <class S> S leaky_relu(S x, S, S a, S) { return x < S(0) ? a * x : x; }
// NaN passes through (std::clamp would return its first argument; min/max of NaN pick a bound).
template <class S> S clamp_nan(S x, S lo, S hi) { return x < lo ? lo : hi < x ? hi : x; }
template <class S> S clip(S x, S, S lo, S hi) { return clamp_nan(x, lo, hi); }
// exp of a non-positive argument only, so no intermediate overflows at large |x|.
template <class S> S sigmoid(S x, S, S, S) {
  if (x >= S(0)) return S(1) / (S(1) + std::exp(-x));
  const S e = std::exp(x);
  return e / (S(1) + e);
}
template <class S> S tanh_(S x, S, S, S) { return std::tanh(x); }
// expm1 keeps the digits of exp(x) - 1 near zero.
template <class S> S elu(S x, S, S a, S) { return x < S(0) ? a * std::expm1(x) : x; }
template <class S> S hard_sigmoid(S x, S, S a, S b) { return clamp_nan(a * x + b, S(0), S(1)); }
template <class S> S hard_swish(S x, S, S, S) { return x * clamp_nan(x / S(6) + S(0.5), S(0), S(1)); }
template <class S> S gelu(S x, S, S, S) { return S(0.5) * x * (S(1) + std::erf(x / std::numbers::sqrt2_v<S>)); }
template <class S> S gelu_tanh(S x, S, S, S) {
  const S k = std::sqrt(S(2) / std::numbers::pi_v<S>);
  return S(0.5) * x * (S(1) + std::tanh(k * (x + S(0.044715) * x * x * x)));
}
// The stable form: log1p(exp(x)) overflows to inf past x of 88.7 (float), 709 (double).
template <class S> S softplus(S x, S, S, S) { return x > S(0) ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x)); }
template <class S> S mish(S x, S, S, S) { return x * std::tanh(softplus(x, S(0), S(0), S(0))); }
template <class S> S affine(S x, S, S a, S b) { return a * x + b; }
template <class S> S thresholded_relu(S x, S, S a, S) { return x > a ? x : S(0); }
template <class S> S scaled_tanh(S x, S, S a, S b) { return a * std::tanh(b * x); }
template <class S> S softsign(S x, S, S, S) { return x / (S(1) + std::fabs(x)); }
template <class S> S exp_(S x, S, S, S) { return std::exp(x); }
template <class S> S log_(S x, S, S, S) { return std::log(x); }
template <class S> S sqrt_(S x, S, S, S) { return std::sqrt(x); }
// Integers too (the ONNX ops take them): unsigned values are their own magnitude.
template <class S> S abs_(S x, S, S, S) {
  if constexpr (std::is_unsigned_v<S>) return x;
  else if constexpr (std::is_floating_point_v<S>) return std::fabs(x);
  else return x < S(0) ? S(-x) : x;
}
template <class S> S neg(S x, S, S, S) { return S(-x); }
template <class S> S add(S x, S b, S, S) { return x + b; }
template <class S> S sub(S x, S b, S, S) { return x - b; }
template <class S> S mul(S x, S b, S, S) { return x * b; }
template <class S> S div(S x, S b, S, S) { return x / b; }
// NaN in either operand gives NaN (numpy's maximum and minimum; ONNX Runtime's Max and Min).
template <class S> S max_(S x, S b, S, S) { return x != x ? x : b != b ? b : x < b ? b : x; }
template <class S> S min_(S x, S b, S, S) { return x != x ? x : b != b ? b : b < x ? b : x; }
template <class S> S pow_(S x, S b, S, S) { return std::pow(x, b); }

}  // namespace kiln::ops::elementwise_math
