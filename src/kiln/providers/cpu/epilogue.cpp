// Fused epilogues as oneDNN post-ops.
#include "kiln/providers/cpu/epilogue.h"

#include <cstring>

namespace kiln::providers::cpu {

std::optional<EltwiseOp> eltwise_for(const ops::Activation& a) {
  using dnnl::algorithm;
  if (a.op == "Relu") return EltwiseOp{algorithm::eltwise_relu};
  if (a.op == "LeakyRelu") return EltwiseOp{algorithm::eltwise_relu, a.alpha};
  if (a.op == "Clip") return EltwiseOp{algorithm::eltwise_clip, a.alpha, a.beta};
  if (a.op == "Sigmoid") return EltwiseOp{algorithm::eltwise_logistic};
  if (a.op == "Tanh") return EltwiseOp{algorithm::eltwise_tanh};
  if (a.op == "Elu") return EltwiseOp{algorithm::eltwise_elu, a.alpha};
  if (a.op == "HardSwish") return EltwiseOp{algorithm::eltwise_hardswish};
  if (a.op == "Gelu") return EltwiseOp{algorithm::eltwise_gelu_erf};
  if (a.op == "GeluTanh") return EltwiseOp{algorithm::eltwise_gelu_tanh};
  if (a.op == "Mish") return EltwiseOp{algorithm::eltwise_mish};
  return std::nullopt;
}

std::optional<EltwiseOp> eltwise_for_math(const std::string& op) {
  using dnnl::algorithm;
  if (op == "Exp") return EltwiseOp{algorithm::eltwise_exp};
  if (op == "Log") return EltwiseOp{algorithm::eltwise_log};
  if (op == "Sqrt") return EltwiseOp{algorithm::eltwise_sqrt};
  if (op == "Abs") return EltwiseOp{algorithm::eltwise_abs};
  if (op == "Neg") return EltwiseOp{algorithm::eltwise_linear, -1.0f, 0.0f};
  if (op == "Softplus") return EltwiseOp{algorithm::eltwise_soft_relu};
  if (op == "Reciprocal") return EltwiseOp{algorithm::eltwise_pow, 1.0f, -1.0f};
  if (op == "Round") return EltwiseOp{algorithm::eltwise_round};  // halves to even, as ONNX's Round
  return std::nullopt;
}

std::vector<EltwiseOp> eltwise_post_ops_for(const ops::Activation& a) {
  if (std::optional<EltwiseOp> e = eltwise_for(a)) return {*e};
  if (a.op == "HardSigmoid")  // clip(alpha x + beta, 0, 1): oneDNN 2.6 has no hardsigmoid
    return {EltwiseOp{dnnl::algorithm::eltwise_linear, a.alpha, a.beta}, EltwiseOp{dnnl::algorithm::eltwise_clip, 0.0f, 1.0f}};
  return {};
}

Capability epilogue_supported(const ir::Node& node) {
  if (const std::optional<ops::Activation> a = ops::fused_activation(node); a && eltwise_post_ops_for(*a).empty())
    return Capability::no("fused activation " + a->op + " has no oneDNN post-op");
  return Capability::yes();
}

dnnl::primitive_attr epilogue_attr(const ir::Node& node) {
  dnnl::post_ops post_ops;
  if (node.input(kResidualInput)) post_ops.append_sum(1.0f);
  if (const std::optional<ops::Activation> a = ops::fused_activation(node)) {
    for (const EltwiseOp& e : eltwise_post_ops_for(*a)) post_ops.append_eltwise(1.0f, e.algorithm, e.alpha, e.beta);
  }
  dnnl::primitive_attr attr;
  attr.set_post_ops(post_ops);
  return attr;
}

Status prepare_residual(ops::KernelContext& ctx) {
  const Tensor* residual = ctx.input(kResidualInput);
  if (!residual) return Status::ok();
  Tensor& out = *ctx.output(0);
  if (residual->byte_size() != out.byte_size()) return ctx.error("residual and output sizes differ");
  if (residual->raw_data() == out.raw_data()) return Status::ok();  // the planner gave both one buffer
  std::memcpy(out.raw_data(), residual->raw_data(), residual->byte_size());
  return Status::ok();
}

}  // namespace kiln::providers::cpu
