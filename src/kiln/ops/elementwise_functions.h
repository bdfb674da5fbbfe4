// The element-wise functions Kiln computes inside other kernels, written once: each with its ONNX
// op name, its operands and parameters, its scalar definition (float and double, one template),
// the float expression generated code computes, its default parameters, and what may hold it. Every consumer reads this
// table: the standalone ONNX ops (elementwise_unary.cpp, through elementwise_math.h), the
// activations of fused nodes (activation.h), kiln.ElementwiseChain's steps and reference
// (elementwise_chain.h), recurrent cells' activations (recurrent_cell.h), the fusion passes, the cpu
// provider's oneDNN mapping and the code generator (providers/cpu/codegen). Consumers hold an
// `Elementwise`; a function's name is read or written only at the IR's attributes.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::ops {

enum class Elementwise {
  // Activations (alpha, beta as ONNX names them for each).
  kRelu, kLeakyRelu, kClip, kSigmoid, kTanh, kElu, kHardSigmoid, kHardSwish, kGelu, kGeluTanh, kMish,
  kAffine, kThresholdedRelu, kScaledTanh, kSoftsign, kSoftplus,
  // Unary math.
  kExp, kLog, kSqrt, kAbs, kNeg,
  // Binary: x op b.
  kAdd, kSub, kMul, kDiv, kMax, kMin, kPow,
};

// Where a function may appear.
enum ElementwiseUse : unsigned {
  kFusedActivation = 1u << 0,    // a fused node's activation (kiln.FusedConv and the like)
  kChainStep = 1u << 1,          // a kiln.ElementwiseChain step (a vectorised pass runs it)
  kRecurrentActivation = 1u << 2,  // an RNN/GRU/LSTM activation
};

struct ElementwiseFunction {
  Elementwise function;
  std::string_view name;  // the ONNX op ("GeluTanh": Gelu with approximate = tanh)
  int operands = 1;       // 1, or 2 for binary functions (x op b)
  bool commutative = false;
  unsigned uses = 0;      // ElementwiseUse bits
  // A compare or a few multiplies per element, no transcendental function: a plain loop is fast.
  bool cheap = false;
  // alpha and beta when the ONNX op (or an RNN's activation) leaves them out.
  float default_alpha = 0, default_beta = 0;
  // The function of x (and b for binary ones) with parameters alpha, beta.
  float (*f32)(float x, float b, float alpha, float beta) = nullptr;
  double (*f64)(double x, double b, double alpha, double beta) = nullptr;
  // What generated code computes in float: C++ over {x}, {b}, {alpha}, {beta} (hex float literals).
  std::string_view generated;

  bool allows(ElementwiseUse use) const { return (uses & use) != 0; }
  template <class S>
  S operator()(S x, S b, S alpha, S beta) const {
    if constexpr (sizeof(S) == sizeof(float)) return f32(x, b, alpha, beta);
    else return f64(x, b, alpha, beta);
  }
};

// Every function, in the enum's order.
const std::vector<ElementwiseFunction>& elementwise_functions();
const ElementwiseFunction& elementwise_function(Elementwise function);
// The function named `name` (an ONNX op name, or GeluTanh), if the table has it.
const ElementwiseFunction* find_elementwise(std::string_view name);

}  // namespace kiln::ops
