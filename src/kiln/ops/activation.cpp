// Activation: recognising fusable activation ops and computing them.
#include "kiln/ops/activation.h"

#include <limits>

#include "kiln/ops/elementwise_functions.h"

namespace kiln::ops {
namespace {

// Clip's bound: the opset-6 attribute, or the constant input (opset 11+); nullopt when not constant.
std::optional<float> clip_bound(const ir::Node& node, size_t input, const char* attr, float fallback) {
  if (node.opset_version < 11) return node.attr_float(attr, fallback);
  const ir::Value* v = node.input(input);
  if (!v) return fallback;
  if (!v->initializer || v->initializer->element_count() != 1 || v->initializer->dtype() != DType::kFloat) return std::nullopt;
  return v->initializer->data<float>()[0];
}

// `a` with its table entry.
Activation resolved(Activation a) {
  a.function = find_elementwise(a.op);
  return a;
}

// The activation `node` computes, its table entry not yet set.
std::optional<Activation> onnx_activation(const ir::Node& node) {
  if (node.inputs.empty() || !node.inputs[0]) return std::nullopt;
  if (node.op_type == "Gelu" && (node.domain == "kiln" || node.domain.empty()))
    return Activation{node.attr_string("approximate", "none") == "tanh" ? "GeluTanh" : "Gelu"};
  if (!node.domain.empty()) return std::nullopt;
  const ElementwiseFunction* f = find_elementwise(node.op_type);
  if (!f || !f->allows(kFusedActivation) || f->function == Elementwise::kGeluTanh) return std::nullopt;
  const std::string& op = node.op_type;
  switch (f->function) {
    case Elementwise::kLeakyRelu: return Activation{op, node.attr_float("alpha", 0.01f)};
    case Elementwise::kElu: return Activation{op, node.attr_float("alpha", 1.0f)};
    case Elementwise::kHardSigmoid: return Activation{op, node.attr_float("alpha", 0.2f), node.attr_float("beta", 0.5f)};
    case Elementwise::kClip: {
      const float inf = std::numeric_limits<float>::infinity();
      const std::optional<float> lo = clip_bound(node, 1, "min", -inf), hi = clip_bound(node, 2, "max", inf);
      if (lo && hi) return Activation{op, *lo, *hi};
      return std::nullopt;
    }
    default: return Activation{op};
  }
}

}  // namespace

double gelu(double x, bool tanh_form) {
  return elementwise_function(tanh_form ? Elementwise::kGeluTanh : Elementwise::kGelu)(x, 0.0, 0.0, 0.0);
}

double mish(double x) { return elementwise_function(Elementwise::kMish)(x, 0.0, 0.0, 0.0); }

double Activation::apply(double x) const {
  const ElementwiseFunction* f = function ? function : find_elementwise(op);
  return f ? (*f)(x, 0.0, static_cast<double>(alpha), static_cast<double>(beta)) : x;
}

std::optional<Activation> activation_of(const ir::Node& node) {
  const std::optional<Activation> a = onnx_activation(node);
  return a ? std::optional<Activation>(resolved(*a)) : std::nullopt;
}

std::optional<Activation> fused_activation(const ir::Node& node) {
  const std::string op = node.attr_string("activation");
  const ElementwiseFunction* f = find_elementwise(op);
  if (!f || !f->allows(kFusedActivation)) return std::nullopt;
  return resolved(Activation{op, node.attr_float("activation_alpha", 0.0f), node.attr_float("activation_beta", 0.0f)});
}

std::string unknown_fused_activation(const ir::Node& node) {
  if (!node.has_attr("activation") || fused_activation(node)) return "";
  return "unknown activation '" + node.attr_string("activation") + "'";
}

void set_fused_activation(ir::Node& node, const Activation& activation) {
  node.attributes["activation"] = ir::Attribute::of_string(activation.op);
  node.attributes["activation_alpha"] = ir::Attribute::of_float(activation.alpha);
  node.attributes["activation_beta"] = ir::Attribute::of_float(activation.beta);
}

}  // namespace kiln::ops
