// The element-wise functions Kiln computes inside other kernels, written once: each with its ONNX
// op name, its operands and parameters, its scalar definition (float and double, one template),
// the float expression generated code computes, and what may hold it. Every consumer reads this
// table: the activations of fused nodes (activation.h), kiln.ElementwiseChain's steps and
// reference (elementwise_chain.h), recurrent cells' activations (recurrent_cell.h), and the code
// generator's lowering and C++ emitter (codegen/). A name outside the table is not one of them.
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
