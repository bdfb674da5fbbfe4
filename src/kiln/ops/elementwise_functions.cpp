// The table of element-wise functions (see elementwise_functions.h): each function's math once, as
// a template over float and double.
#include "kiln/ops/elementwise_functions.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace kiln::ops {
namespace {
// Named, so that a unity build's other files (their own relu, add, ...) do not collide.
namespace elementwise_math {

template <class S> S relu(S x, S, S, S) { return x < S(0) ? S(0) : x; }
template <class S> S leaky_relu(S x, S, S a, S) { return x >= S(0) ? x : a * x; }
template <class S> S clip(S x, S, S lo, S hi) { return std::min(std::max(x, lo), hi); }
template <class S> S sigmoid(S x, S, S, S) { return S(1) / (S(1) + std::exp(-x)); }
template <class S> S tanh_(S x, S, S, S) { return std::tanh(x); }
template <class S> S elu(S x, S, S a, S) { return x >= S(0) ? x : a * (std::exp(x) - S(1)); }
template <class S> S hard_sigmoid(S x, S, S a, S b) { return std::clamp(a * x + b, S(0), S(1)); }
template <class S> S hard_swish(S x, S, S, S) { return x * std::clamp(x / S(6) + S(0.5), S(0), S(1)); }
template <class S> S gelu(S x, S, S, S) { return S(0.5) * x * (S(1) + std::erf(x / std::numbers::sqrt2_v<S>)); }
template <class S> S gelu_tanh(S x, S, S, S) {
  const S k = std::sqrt(S(2) / std::numbers::pi_v<S>);
  return S(0.5) * x * (S(1) + std::tanh(k * (x + S(0.044715) * x * x * x)));
}
// Softplus in its stable form: log1p(exp(x)) overflows to inf past x of 88.7 (float), 709 (double).
template <class S> S softplus(S x, S, S, S) { return x > S(0) ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x)); }
template <class S> S mish(S x, S, S, S) { return x * std::tanh(softplus(x, S(0), S(0), S(0))); }
template <class S> S affine(S x, S, S a, S b) { return a * x + b; }
template <class S> S thresholded_relu(S x, S, S a, S) { return x > a ? x : S(0); }
template <class S> S scaled_tanh(S x, S, S a, S b) { return a * std::tanh(b * x); }
template <class S> S softsign(S x, S, S, S) { return x / (S(1) + std::fabs(x)); }
template <class S> S exp_(S x, S, S, S) { return std::exp(x); }
template <class S> S log_(S x, S, S, S) { return std::log(x); }
template <class S> S sqrt_(S x, S, S, S) { return std::sqrt(x); }
template <class S> S abs_(S x, S, S, S) { return std::fabs(x); }
template <class S> S neg(S x, S, S, S) { return -x; }
template <class S> S add(S x, S b, S, S) { return x + b; }
template <class S> S sub(S x, S b, S, S) { return x - b; }
template <class S> S mul(S x, S b, S, S) { return x * b; }
template <class S> S div(S x, S b, S, S) { return x / b; }
template <class S> S max_(S x, S b, S, S) { return std::max(x, b); }
template <class S> S min_(S x, S b, S, S) { return std::min(x, b); }
template <class S> S pow_(S x, S b, S, S) { return std::pow(x, b); }

}  // namespace elementwise_math

constexpr unsigned kFused = kFusedActivation, kChain = kChainStep, kRecurrent = kRecurrentActivation;

#define KILN_ELEMENTWISE(fn, name, operands, commutative, uses, math, generated) \
  ElementwiseFunction { Elementwise::fn, name, operands, commutative, uses, &elementwise_math::math<float>, &elementwise_math::math<double>, generated }

// Generated code exists for chain steps only (the code generator lowers kiln.ElementwiseChain).
std::vector<ElementwiseFunction> make_table() {
  return {
    KILN_ELEMENTWISE(kRelu, "Relu", 1, false, kFused | kChain | kRecurrent, relu, "({x} < 0.0f ? 0.0f : {x})"),
    KILN_ELEMENTWISE(kLeakyRelu, "LeakyRelu", 1, false, kFused | kChain | kRecurrent, leaky_relu,
                     "({x} < 0.0f ? {alpha} * {x} : {x})"),
    KILN_ELEMENTWISE(kClip, "Clip", 1, false, kFused | kChain, clip, "std::min(std::max({x}, {alpha}), {beta})"),
    KILN_ELEMENTWISE(kSigmoid, "Sigmoid", 1, false, kFused | kChain | kRecurrent, sigmoid, "(1.0f / (1.0f + std::exp(-{x})))"),
    KILN_ELEMENTWISE(kTanh, "Tanh", 1, false, kFused | kChain | kRecurrent, tanh_, "std::tanh({x})"),
    KILN_ELEMENTWISE(kElu, "Elu", 1, false, kFused | kChain | kRecurrent, elu, "({x} < 0.0f ? {alpha} * (std::exp({x}) - 1.0f) : {x})"),
    KILN_ELEMENTWISE(kHardSigmoid, "HardSigmoid", 1, false, kFused | kRecurrent, hard_sigmoid, ""),
    KILN_ELEMENTWISE(kHardSwish, "HardSwish", 1, false, kFused | kChain, hard_swish,
                     "({x} * std::min(std::max({x} / 6.0f + 0.5f, 0.0f), 1.0f))"),
    KILN_ELEMENTWISE(kGelu, "Gelu", 1, false, kFused, gelu, ""),
    KILN_ELEMENTWISE(kGeluTanh, "GeluTanh", 1, false, kFused, gelu_tanh, ""),
    KILN_ELEMENTWISE(kMish, "Mish", 1, false, kFused, mish, ""),
    KILN_ELEMENTWISE(kAffine, "Affine", 1, false, kRecurrent, affine, ""),
    KILN_ELEMENTWISE(kThresholdedRelu, "ThresholdedRelu", 1, false, kRecurrent, thresholded_relu, ""),
    KILN_ELEMENTWISE(kScaledTanh, "ScaledTanh", 1, false, kRecurrent, scaled_tanh, ""),
    KILN_ELEMENTWISE(kSoftsign, "Softsign", 1, false, kRecurrent, softsign, ""),
    KILN_ELEMENTWISE(kSoftplus, "Softplus", 1, false, kChain | kRecurrent, softplus,
                     "({x} > 0.0f ? {x} + std::log1p(std::exp(-{x})) : std::log1p(std::exp({x})))"),
    KILN_ELEMENTWISE(kExp, "Exp", 1, false, kChain, exp_, "std::exp({x})"),
    KILN_ELEMENTWISE(kLog, "Log", 1, false, kChain, log_, "std::log({x})"),
    KILN_ELEMENTWISE(kSqrt, "Sqrt", 1, false, kChain, sqrt_, "std::sqrt({x})"),
    KILN_ELEMENTWISE(kAbs, "Abs", 1, false, kChain, abs_, "std::fabs({x})"),
    KILN_ELEMENTWISE(kNeg, "Neg", 1, false, kChain, neg, "(-{x})"),
    KILN_ELEMENTWISE(kAdd, "Add", 2, true, kChain, add, "({x} + {b})"),
    KILN_ELEMENTWISE(kSub, "Sub", 2, false, kChain, sub, "({x} - {b})"),
    KILN_ELEMENTWISE(kMul, "Mul", 2, true, kChain, mul, "({x} * {b})"),
    KILN_ELEMENTWISE(kDiv, "Div", 2, false, kChain, div, "({x} / {b})"),
    KILN_ELEMENTWISE(kMax, "Max", 2, true, kChain, max_, "std::max({x}, {b})"),
    KILN_ELEMENTWISE(kMin, "Min", 2, true, kChain, min_, "std::min({x}, {b})"),
    KILN_ELEMENTWISE(kPow, "Pow", 2, false, kChain, pow_, "std::pow({x}, {b})"),
  };
}

#undef KILN_ELEMENTWISE

}  // namespace

const std::vector<ElementwiseFunction>& elementwise_functions() {
  static const std::vector<ElementwiseFunction> table = make_table();
  return table;
}

const ElementwiseFunction& elementwise_function(Elementwise function) {
  return elementwise_functions()[static_cast<size_t>(function)];  // in the enum's order (a test checks it)
}

const ElementwiseFunction* find_elementwise(std::string_view name) {
  for (const ElementwiseFunction& f : elementwise_functions())
    if (f.name == name) return &f;
  return nullptr;
}

}  // namespace kiln::ops
