// Activation: recognising fusable activation ops and computing them.
#include "kiln/ops/activation.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>

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

double gelu(double x, bool tanh_form) {
  if (!tanh_form) return 0.5 * x * (1.0 + std::erf(x / std::numbers::sqrt2));
  const double k = std::sqrt(2.0 / std::numbers::pi);
  return 0.5 * x * (1.0 + std::tanh(k * (x + 0.044715 * x * x * x)));
}

double mish(double x) {
  const double softplus = x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
  return x * std::tanh(softplus);
}

double Activation::apply(double x) const {
  if (op == "Relu") return std::max(x, 0.0);
  if (op == "LeakyRelu") return x >= 0 ? x : alpha * x;
  if (op == "Clip") return std::min(std::max(x, static_cast<double>(alpha)), static_cast<double>(beta));
  if (op == "Sigmoid") return 1.0 / (1.0 + std::exp(-x));
  if (op == "Tanh") return std::tanh(x);
  if (op == "Elu") return x >= 0 ? x : alpha * (std::exp(x) - 1.0);
  if (op == "HardSigmoid") return std::clamp(alpha * x + beta, 0.0, 1.0);
  if (op == "HardSwish") return x * std::clamp(x / 6.0 + 0.5, 0.0, 1.0);
  if (op == "Gelu" || op == "GeluTanh") return gelu(x, op == "GeluTanh");
  if (op == "Mish") return mish(x);
  return x;
}

std::optional<Activation> activation_of(const ir::Node& node) {
  if (node.inputs.empty() || !node.inputs[0]) return std::nullopt;
  if (node.op_type == "Gelu" && (node.domain == "kiln" || node.domain.empty()))
    return Activation{node.attr_string("approximate", "none") == "tanh" ? "GeluTanh" : "Gelu"};
  if (!node.domain.empty()) return std::nullopt;
  const std::string& op = node.op_type;
  if (op == "Relu" || op == "Sigmoid" || op == "Tanh" || op == "HardSwish" || op == "Mish") return Activation{op};
  if (op == "LeakyRelu") return Activation{op, node.attr_float("alpha", 0.01f)};
  if (op == "Elu") return Activation{op, node.attr_float("alpha", 1.0f)};
  if (op == "HardSigmoid") return Activation{op, node.attr_float("alpha", 0.2f), node.attr_float("beta", 0.5f)};
  if (op == "Clip") {
    const float inf = std::numeric_limits<float>::infinity();
    const std::optional<float> lo = clip_bound(node, 1, "min", -inf), hi = clip_bound(node, 2, "max", inf);
    if (lo && hi) return Activation{op, *lo, *hi};
  }
  return std::nullopt;
}

std::optional<Activation> fused_activation(const ir::Node& node) {
  const std::string op = node.attr_string("activation");
  if (op.empty()) return std::nullopt;
  return Activation{op, node.attr_float("activation_alpha", 0.0f), node.attr_float("activation_beta", 0.0f)};
}

void set_fused_activation(ir::Node& node, const Activation& activation) {
  node.attributes["activation"] = ir::Attribute::of_string(activation.op);
  node.attributes["activation_alpha"] = ir::Attribute::of_float(activation.alpha);
  node.attributes["activation_beta"] = ir::Attribute::of_float(activation.beta);
}

}  // namespace kiln::ops
