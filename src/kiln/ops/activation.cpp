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

}  // namespace

std::optional<Activation> activation_of(const ir::Node& node) {
  if (node.inputs.empty() || !node.inputs[0]) return std::nullopt;
  if (node.op_type == "Gelu" && (node.domain == "kiln" || node.domain.empty()))
    return Activation{node.attr_string("approximate", "none") == "tanh" ? Elementwise::kGeluTanh : Elementwise::kGelu};
  if (!node.domain.empty()) return std::nullopt;
  const ElementwiseFunction* f = find_elementwise(node.op_type);
  if (!f || !f->allows(kFusedActivation) || f->function == Elementwise::kGeluTanh) return std::nullopt;
  if (f->function == Elementwise::kClip) {
    // Clip-1 has no bounds by default; later versions the float range (the table's defaults).
    const float inf = std::numeric_limits<float>::infinity();
    const bool unbounded = node.opset_version < 6;
    const std::optional<float> lo = clip_bound(node, 1, "min", unbounded ? -inf : f->default_alpha),
                               hi = clip_bound(node, 2, "max", unbounded ? inf : f->default_beta);
    if (lo && hi) return Activation{f->function, *lo, *hi};
    return std::nullopt;
  }
  return Activation{f->function, node.attr_float("alpha", f->default_alpha), node.attr_float("beta", f->default_beta)};
}

std::optional<Activation> fused_activation(const ir::Node& node) {
  const ElementwiseFunction* f = find_elementwise(node.attr_string("activation"));
  if (!f || !f->allows(kFusedActivation)) return std::nullopt;
  return Activation{f->function, node.attr_float("activation_alpha", 0.0f), node.attr_float("activation_beta", 0.0f)};
}

std::string unknown_fused_activation(const ir::Node& node) {
  if (!node.has_attr("activation") || fused_activation(node)) return "";
  return "unknown activation '" + node.attr_string("activation") + "'";
}

void set_fused_activation(ir::Node& node, const Activation& activation) {
  node.attributes["activation"] = ir::Attribute::of_string(std::string(activation.name()));
  node.attributes["activation_alpha"] = ir::Attribute::of_float(activation.alpha);
  node.attributes["activation_beta"] = ir::Attribute::of_float(activation.beta);
}

}  // namespace kiln::ops
