// The table of element-wise functions (see elementwise_functions.h): each function's math once, as
// a template over the compute type (elementwise_math.h), here instantiated for float and double.
#include "kiln/ops/elementwise_functions.h"

#include <limits>

#include "kiln/ops/elementwise_math.h"

namespace kiln::ops {
namespace {

constexpr unsigned kFused = kFusedActivation, kChain = kChainStep, kRecurrent = kRecurrentActivation;

// Entries in the enum's order: function, ONNX name, operands, commutative, uses, cheap, default
// alpha and beta, math, generated code.
#define KILN_ELEMENTWISE(fn, name, operands, commutative, uses, cheap, alpha, beta, math, generated)                     \
  ElementwiseFunction {                                                                                              \
    Elementwise::fn, name, operands, commutative, uses, cheap, alpha, beta, &elementwise_math::math<float>,          \
        &elementwise_math::math<double>, generated                                                                   \
  }

// Clip's default bounds: ONNX's (opset 6 on) are the float range, so Clip(inf) is the largest float.
constexpr float kLowest = std::numeric_limits<float>::lowest(), kMax = std::numeric_limits<float>::max();

// Generated code exists for chain steps only (the code generator lowers kiln.ElementwiseChain).
std::vector<ElementwiseFunction> make_table() {
  return {
    KILN_ELEMENTWISE(kRelu, "Relu", 1, false, kFused | kChain | kRecurrent, true, 0, 0, relu, "({x} < 0.0f ? 0.0f : {x})"),
    KILN_ELEMENTWISE(kLeakyRelu, "LeakyRelu", 1, false, kFused | kChain | kRecurrent, true, 0.01f, 0, leaky_relu,
                     "({x} < 0.0f ? {alpha} * {x} : {x})"),
    KILN_ELEMENTWISE(kClip, "Clip", 1, false, kFused | kChain, true, kLowest, kMax, clip, "({x} < {alpha} ? {alpha} : {beta} < {x} ? {beta} : {x})"),
    KILN_ELEMENTWISE(kSigmoid, "Sigmoid", 1, false, kFused | kChain | kRecurrent, false, 0, 0, sigmoid, "({x} >= 0.0f ? 1.0f / (1.0f + std::exp(-{x})) : std::exp({x}) / (1.0f + std::exp({x})))"),
    KILN_ELEMENTWISE(kTanh, "Tanh", 1, false, kFused | kChain | kRecurrent, false, 0, 0, tanh_, "std::tanh({x})"),
    KILN_ELEMENTWISE(kElu, "Elu", 1, false, kFused | kChain | kRecurrent, false, 1, 0, elu, "({x} < 0.0f ? {alpha} * std::expm1({x}) : {x})"),
    KILN_ELEMENTWISE(kHardSigmoid, "HardSigmoid", 1, false, kFused | kRecurrent, true, 0.2f, 0.5f, hard_sigmoid, ""),
    KILN_ELEMENTWISE(kHardSwish, "HardSwish", 1, false, kFused | kChain, true, 0, 0, hard_swish,
                     "({x} * std::clamp({x} / 6.0f + 0.5f, 0.0f, 1.0f))"),
    KILN_ELEMENTWISE(kGelu, "Gelu", 1, false, kFused, false, 0, 0, gelu, ""),
    KILN_ELEMENTWISE(kGeluTanh, "GeluTanh", 1, false, kFused, false, 0, 0, gelu_tanh, ""),
    KILN_ELEMENTWISE(kMish, "Mish", 1, false, kFused, false, 0, 0, mish, ""),
    KILN_ELEMENTWISE(kAffine, "Affine", 1, false, kRecurrent, true, 1, 0, affine, ""),
    KILN_ELEMENTWISE(kThresholdedRelu, "ThresholdedRelu", 1, false, kRecurrent, true, 1, 0, thresholded_relu, ""),
    KILN_ELEMENTWISE(kScaledTanh, "ScaledTanh", 1, false, kRecurrent, false, 1, 1, scaled_tanh, ""),
    KILN_ELEMENTWISE(kSoftsign, "Softsign", 1, false, kRecurrent, false, 0, 0, softsign, ""),
    KILN_ELEMENTWISE(kSoftplus, "Softplus", 1, false, kChain | kRecurrent, false, 0, 0, softplus,
                     "({x} > 0.0f ? {x} + std::log1p(std::exp(-{x})) : std::log1p(std::exp({x})))"),
    KILN_ELEMENTWISE(kExp, "Exp", 1, false, kChain, false, 0, 0, exp_, "std::exp({x})"),
    KILN_ELEMENTWISE(kLog, "Log", 1, false, kChain, false, 0, 0, log_, "std::log({x})"),
    KILN_ELEMENTWISE(kSqrt, "Sqrt", 1, false, kChain, false, 0, 0, sqrt_, "std::sqrt({x})"),
    KILN_ELEMENTWISE(kAbs, "Abs", 1, false, kChain, true, 0, 0, abs_, "std::fabs({x})"),
    KILN_ELEMENTWISE(kNeg, "Neg", 1, false, kChain, true, 0, 0, neg, "(-{x})"),
    KILN_ELEMENTWISE(kAdd, "Add", 2, true, kChain, true, 0, 0, add, "({x} + {b})"),
    KILN_ELEMENTWISE(kSub, "Sub", 2, false, kChain, true, 0, 0, sub, "({x} - {b})"),
    KILN_ELEMENTWISE(kMul, "Mul", 2, true, kChain, true, 0, 0, mul, "({x} * {b})"),
    KILN_ELEMENTWISE(kDiv, "Div", 2, false, kChain, false, 0, 0, div, "({x} / {b})"),
    KILN_ELEMENTWISE(kMax, "Max", 2, true, kChain, true, 0, 0, max_, "({x} != {x} ? {x} : {b} != {b} ? {b} : {x} < {b} ? {b} : {x})"),
    KILN_ELEMENTWISE(kMin, "Min", 2, true, kChain, true, 0, 0, min_, "({x} != {x} ? {x} : {b} != {b} ? {b} : {b} < {x} ? {b} : {x})"),
    KILN_ELEMENTWISE(kPow, "Pow", 2, false, kChain, false, 0, 0, pow_, "std::pow({x}, {b})"),
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
