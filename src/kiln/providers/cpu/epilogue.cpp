// Fused epilogues as oneDNN post-ops.
#include "kiln/providers/cpu/epilogue.h"

#include <cstring>

#include "kiln/ops/numeric_precision.h"
#include "kiln/providers/cpu/vector_math.h"

namespace kiln::providers::cpu {

std::vector<EltwiseOp> onednn_eltwise(ops::Elementwise f, float alpha, float beta) {
  using dnnl::algorithm;
  using E = ops::Elementwise;
  switch (f) {
    case E::kRelu: return {{algorithm::eltwise_relu}};
    case E::kLeakyRelu: return {{algorithm::eltwise_relu, alpha}};
    case E::kClip: return {{algorithm::eltwise_clip, alpha, beta}};
    case E::kSigmoid: return {{algorithm::eltwise_logistic}};
    case E::kTanh: return {{algorithm::eltwise_tanh}};
    case E::kElu: return {{algorithm::eltwise_elu, alpha}};
    // clip(alpha x + beta, 0, 1): oneDNN 2.6 has no hardsigmoid.
    case E::kHardSigmoid: return {{algorithm::eltwise_linear, alpha, beta}, {algorithm::eltwise_clip, 0.0f, 1.0f}};
    case E::kHardSwish: return {{algorithm::eltwise_hardswish}};
    case E::kGelu: return {{algorithm::eltwise_gelu_erf}};
    case E::kGeluTanh: return {{algorithm::eltwise_gelu_tanh}};
    case E::kMish: return {{algorithm::eltwise_mish}};
    case E::kSoftplus: return {{algorithm::eltwise_soft_relu}};
    case E::kExp: return {{algorithm::eltwise_exp}};
    case E::kLog: return {{algorithm::eltwise_log}};
    case E::kSqrt: return {{algorithm::eltwise_sqrt}};
    case E::kAbs: return {{algorithm::eltwise_abs}};
    case E::kNeg: return {{algorithm::eltwise_linear, -1.0f, 0.0f}};
    default: return {};
  }
}

std::optional<dnnl::algorithm> onednn_binary(ops::Elementwise f) {
  using dnnl::algorithm;
  using E = ops::Elementwise;
  switch (f) {
    case E::kAdd: return algorithm::binary_add;
    case E::kSub: return algorithm::binary_sub;
    case E::kMul: return algorithm::binary_mul;
    case E::kDiv: return algorithm::binary_div;
    case E::kMax: return algorithm::binary_max;
    case E::kMin: return algorithm::binary_min;
    default: return std::nullopt;
  }
}

Capability epilogue_supported(const ir::Node& node) {
  if (const std::optional<ops::Activation> a = ops::fused_activation(node); a && onednn_eltwise(*a).empty())
    return Capability::no("fused activation " + std::string(a->name()) + " has no oneDNN post-op");
  return Capability::yes();
}

dnnl::primitive_attr epilogue_attr(const ir::Node& node, dnnl::post_ops first) {
  dnnl::post_ops post_ops = std::move(first);
  if (const ir::Value* residual = node.input(kResidualInput)) {
    // A uint8 residual in a uint8 output is summed as stored, in its own quantization; any other is
    // summed in the output's type (prepare_residual widens a reduced one into a float32 output).
    const std::optional<ops::Uint8Quantization> q = ops::residual_quantization(node);
    if (residual->type.dtype == DType::kUInt8 && node.outputs[0]->type.dtype == DType::kUInt8 && q)
      post_ops.append_sum(q->scale, q->zero_point);
    else
      post_ops.append_sum(1.0f);
  }
  if (const std::optional<ops::Activation> a = ops::fused_activation(node)) {
    for (const EltwiseOp& e : onednn_eltwise(*a)) post_ops.append_eltwise(1.0f, e.algorithm, e.alpha, e.beta);
  }
  if (const std::optional<ops::Uint8Quantization> q = ops::output_quantization(node))
    post_ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_linear, 1.0f / q->scale, static_cast<float>(q->zero_point));
  dnnl::primitive_attr attr;
  attr.set_post_ops(post_ops);
  return attr;
}

Status prepare_residual(ops::KernelContext& ctx) {
  const Tensor* residual = ctx.input(kResidualInput);
  if (!residual) return Status::ok();
  Tensor& out = *ctx.output(0);
  if (residual->element_count() != out.element_count()) return ctx.error("residual and output sizes differ");
  KILN_RETURN_IF_ERROR(ops::check_residual_dtype(ctx.node(), residual->dtype(), out.dtype()));
  if (residual->raw_data() == out.raw_data()) return Status::ok();  // the planner gave both one buffer
  const int64_t count = out.element_count();
  float* wide = out.data<float>();
  switch (residual->dtype()) {
    case DType::kUInt8:
      if (out.dtype() == DType::kFloat) {
        dequantize_uint8(residual->data<uint8_t>(), count, *ops::residual_quantization(ctx.node()), wide);
        return Status::ok();
      }
      break;
    case DType::kBFloat16:
      if (out.dtype() == DType::kFloat) {
        bf16_to_float(residual->data<uint16_t>(), count, wide);
        return Status::ok();
      }
      break;
    default: break;
  }
  std::memcpy(out.raw_data(), residual->raw_data(), residual->byte_size());
  return Status::ok();
}

}  // namespace kiln::providers::cpu
