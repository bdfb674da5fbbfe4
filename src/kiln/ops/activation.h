// Activation: an element-wise activation a fused kernel applies to its result (kiln.FusedConv's
// `activation` attribute), read from the ONNX op it replaced. One definition serves the fusion
// pass (which ops fuse), the reference kernel (the math) and the fast providers (their mapping).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "kiln/ir/graph.h"
#include "kiln/ops/elementwise_functions.h"

namespace kiln::ops {

struct Activation {
  // The table's function: Relu, LeakyRelu, Clip, Sigmoid, Tanh, Elu, HardSigmoid, HardSwish, Mish,
  // or Gelu / GeluTanh for Gelu (ONNX's or kiln's) with approximate none / tanh.
  Elementwise function = Elementwise::kRelu;
  float alpha = 0, beta = 0;  // LeakyRelu/Elu alpha; Clip min/max; HardSigmoid alpha/beta

  const ElementwiseFunction& entry() const { return elementwise_function(function); }
  std::string_view name() const { return entry().name; }
  bool is(Elementwise f) const { return function == f; }
  double apply(double x) const { return entry()(x, 0.0, static_cast<double>(alpha), static_cast<double>(beta)); }
};

// The activation `node` computes on its first input, when it is one with constant parameters
// (Clip's min and max must be constants); nullopt otherwise.
std::optional<Activation> activation_of(const ir::Node& node);

// The activation recorded on a fused node (attributes activation, activation_alpha/beta); nullopt
// when there is none or its name is not a fused activation of the element-wise table (the node's
// type rule refuses such a node, so no kernel runs it as if it had none).
std::optional<Activation> fused_activation(const ir::Node& node);
void set_fused_activation(ir::Node& node, const Activation& activation);
// An error naming a fused node's activation attribute when it names no fused activation (fused
// nodes' type rules call it); "" when it is absent or known.
std::string unknown_fused_activation(const ir::Node& node);

}  // namespace kiln::ops
