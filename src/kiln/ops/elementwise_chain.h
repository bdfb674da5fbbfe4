// kiln.ElementwiseChain (domain "kiln"): several element-wise ops applied one after another to one
// float tensor X in a single pass, as the elementwise_chain_fusion pass builds it. Each step is an
// ONNX op: an activation (Relu, LeakyRelu, Clip, Sigmoid, Tanh, Elu, HardSwish), unary math (Exp,
// Log, Sqrt, Abs, Neg, Softplus), or a binary op (Add, Sub, Mul, Div, Max, Min; Pow with a
// constant scalar exponent) whose other operand is one of the node's inputs 1..n, broadcast to
// X's shape (it never grows the result) and on the right unless the op commutes: every step is
// one a vectorised pass (oneDNN's eltwise and binary post-ops) applies. Y has X's type.
// Attributes: `steps` (the op of each step), `operands` (per step: the input index of the other
// operand, -1 for unary steps), `operand_first` (per step: 1 when the operand is the left-hand
// side, as in c - x), `alphas` / `betas` (per step: the activation's parameters).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/ir/graph.h"
#include "kiln/ops/elementwise_functions.h"
#include "kiln/status.h"

namespace kiln::ops {

struct ChainStep {
  Elementwise function = Elementwise::kRelu;
  float alpha = 0, beta = 0;    // activation parameters (LeakyRelu, Clip, Elu, HardSigmoid)
  int operand = -1;             // binary: the chain node's input holding the other operand
  bool operand_first = false;   // binary: the operand is the left-hand side

  bool is_binary() const { return operand >= 0; }
  const ElementwiseFunction& entry() const { return elementwise_function(function); }
  std::string_view name() const { return entry().name; }
  // The step on x and (binary steps) the operand's value b, in double.
  double apply(double x, double b) const;
};

// The steps of a kiln.ElementwiseChain node, read from its attributes; InvalidModel naming the
// node and the step when a step is no chain step of the element-wise table.
Result<std::vector<ChainStep>> chain_steps(const ir::Node& chain);
void set_chain_steps(ir::Node& chain, const std::vector<ChainStep>& steps);

// The step `node` computes on `chain_input` (one of its inputs), when it is a step a chain can
// hold (see above): its output has chain_input's type, and a binary op's other operand is not
// chain_input itself. A binary step's `operand` is the other operand's index among `node`'s
// inputs; the caller renumbers it for the chain node.
std::optional<ChainStep> chain_step_of(const ir::Node& node, const ir::Value* chain_input);

}  // namespace kiln::ops
