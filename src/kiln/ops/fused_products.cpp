// Op family fused (domain "kiln"): a product followed by its epilogue, the nodes the fusion passes
// make. Y = activation(P + bias + Z), with an optional residual Z of Y's shape and an optional
// `activation` (see activation.h).
//   kiln.FusedConv:   P = Conv(X, W), bias per output channel (input 2, as Conv's B); attributes
//                     are Conv's plus `layout`, the activation layout of Y and Z (NCHW by
//                     default, NHWC, NCHW8c, NCHW16c: activation_layout.h), and `input_layout`,
//                     X's (default: `layout`). W stays [M, C/group, kH, kW].
//   kiln.FusedMatMul: P = MatMul(A, B), bias along the last dim (input 2, shape [N]).
// Both: `output_dtype` ("float", "bfloat16" or "uint8"), Y's element type where it is not X's (a
// bf16 value between two bf16 products, a uint8 one between int8 products, with `output_scale` and
// `output_zero_point`: ops/numeric_precision.h); X may then be bfloat16, or uint8 in the node's
// input_scale and input_zero_point, with float weights, and Z bfloat16 or uint8 (in
// residual_scale and residual_zero_point) likewise, of Y's type or widened into a float32 Y.
// Reference kernels are Conv's and MatMul's, so every provider's fused kernel is checked against
// the unfused math.
#include "kiln/ops/fused_product_inputs.h"
#include "kiln/ops/activation.h"
#include "kiln/ops/activation_layout.h"
#include "kiln/ops/conv.h"
#include "kiln/ops/data_movement.h"
#include "kiln/ops/matmul.h"
#include "kiln/ops/numeric_precision.h"
#include "kiln/ops/op_families.h"
#include "kiln/ops/op_helpers.h"
#include "kiln/ops/op_registry.h"

namespace kiln::ops {
namespace {

// Y's type: of `x`'s element type unless the node's output_dtype names another.
Result<ir::TensorType> fused_output_type(const InferenceContext& ctx, DType x, std::optional<ir::Shape> shape) {
  KILN_ASSIGN_OR_RETURN(const std::optional<DType> named, fused_output_dtype(ctx.node()));
  return ir::TensorType{named.value_or(x), std::move(shape)};
}

// `t` as float32 when it is bfloat16 or uint8 (an activation kept so between bf16 or int8
// products; uint8 dequantized with `q`, the node's quantization of it), else itself: the reference
// kernels compute in the weights' type.
Result<Tensor> widened(const Tensor& t, const ir::Node& node, const std::optional<Uint8Quantization>& q) {
  if (t.dtype() != DType::kBFloat16 && t.dtype() != DType::kUInt8) return t;
  if (t.dtype() == DType::kUInt8 && !q) return invalid_model(node.describe() + ": uint8 input without its scale");
  Tensor wide = Tensor::allocate(DType::kFloat, t.shape());
  for (int64_t i = 0; i < t.element_count(); ++i)
    wide.data<float>()[i] = t.dtype() == DType::kUInt8 ? dequantize_uint8(t.data<uint8_t>()[i], *q) : static_cast<float>(element_as_double(t, i));
  return wide;
}

Status fused_conv_infer(InferenceContext& ctx) {
  KILN_ASSIGN_OR_RETURN(const ConvLayouts layouts, conv_layouts(ctx.node()));
  if (const std::string unknown = unknown_fused_activation(ctx.node()); !unknown.empty()) return ctx.error(unknown);
  const ir::TensorType& x = ctx.input_type(0);
  ir::TensorType x_nchw = x;
  if (x.shape) {
    Result<ir::Shape> first = channels_first_shape(*x.shape, layouts.input);
    if (!first.is_ok()) return ctx.error("input X: " + first.status().message());
    x_nchw.shape = first.value();
  }
  std::vector<const ir::TensorType*> types{&x_nchw, &ctx.input_type(1)};
  if (ctx.has_input(2)) types.push_back(&ctx.input_type(2));
  InferenceContext conv_ctx(ctx.node(), types, {});
  KILN_ASSIGN_OR_RETURN(std::optional<ir::Shape> shape, conv_output_shape(conv_ctx, ConvInputs{}, false));
  if (shape) {
    Result<ir::Shape> stored = stored_shape(*shape, layouts.output);
    if (!stored.is_ok()) return ctx.error("output Y: " + stored.status().message());
    shape = stored.value();
  }
  KILN_ASSIGN_OR_RETURN(const ir::TensorType y, fused_output_type(ctx, x.dtype, shape));
  if (ctx.has_input(kFusedResidualInput)) {
    const ir::TensorType& z = ctx.input_type(kFusedResidualInput);
    if (z.shape && shape && !(z.shape->rank() == shape->rank()))
      return ctx.error("residual " + z.to_string() + " does not match the output " + y.to_string());
    KILN_RETURN_IF_ERROR(check_residual_dtype(ctx.node(), z.dtype, y.dtype));
  }
  ctx.set_output_type(0, y);
  return Status::ok();
}

Status apply_epilogue(KernelContext& ctx, const Tensor& product, const Tensor* bias);

Status fused_conv_kernel(KernelContext& ctx) {
  const ir::Node& node = ctx.node();
  KILN_ASSIGN_OR_RETURN(const ConvLayouts layouts, conv_layouts(node));
  KILN_ASSIGN_OR_RETURN(const Tensor input, widened(*ctx.input(0), node, input_quantization(node)));
  const Tensor x = to_channels_first(input, layouts.input);
  Tensor& out = *ctx.output(0);
  Tensor y = Tensor::allocate(ctx.input(1)->dtype(), channels_first_dims(out.shape(), layouts.output));
  KILN_RETURN_IF_ERROR(conv_reference(node, x, *ctx.input(1), ctx.input(2), y));
  return apply_epilogue(ctx, to_stored(y, layouts.output), nullptr);
}

// ---- shared epilogue ----

// out = activation(product + bias + Z): bias (when given) runs along the last dim.
Status apply_epilogue(KernelContext& ctx, const Tensor& product, const Tensor* bias) {
  Tensor& out = *ctx.output(0);
  std::optional<Tensor> wide_z;
  if (const Tensor* stored = ctx.input(kFusedResidualInput)) {
    KILN_RETURN_IF_ERROR(check_residual_dtype(ctx.node(), stored->dtype(), out.dtype()));
    KILN_ASSIGN_OR_RETURN(wide_z, widened(*stored, ctx.node(), residual_quantization(ctx.node())));
  }
  const Tensor* z = wide_z ? &*wide_z : nullptr;
  if (z && z->shape() != out.shape())
    return ctx.error("residual shape " + shape_to_string(z->shape()) + " differs from the output's " + shape_to_string(out.shape()));
  const int64_t n = out.rank() ? out.shape().back() : 1;
  if (bias && bias->element_count() != n) return ctx.error("bias must hold one value per output column");
  const std::optional<Activation> activation = fused_activation(ctx.node());
  const std::optional<Uint8Quantization> quantized = out.dtype() == DType::kUInt8 ? output_quantization(ctx.node()) : std::nullopt;
  if (out.dtype() == DType::kUInt8 && !quantized) return ctx.error("uint8 output without output_scale");
  for (int64_t i = 0; i < out.element_count(); ++i) {
    double v = element_as_double(product, i) + (z ? element_as_double(*z, i) : 0.0) + (bias ? element_as_double(*bias, i % n) : 0.0);
    if (activation) v = activation->apply(v);
    if (quantized) out.data<uint8_t>()[i] = quantize_uint8(static_cast<float>(v), *quantized);
    else store_double(out, i, v);
  }
  return Status::ok();
}

// ---- kiln.FusedMatMul ----

Status fused_matmul_infer(InferenceContext& ctx) {
  if (const std::string unknown = unknown_fused_activation(ctx.node()); !unknown.empty()) return ctx.error(unknown);
  KILN_ASSIGN_OR_RETURN(std::optional<ir::Shape> shape, matmul_output_shape(ctx, 0, 1));
  if (ctx.has_input(2) && ctx.input_type(2).shape && shape && ctx.input_type(2).shape->rank() != 1)
    return ctx.error("bias must be 1-D, got " + ctx.input_type(2).to_string());
  KILN_ASSIGN_OR_RETURN(const ir::TensorType y, fused_output_type(ctx, ctx.input_type(0).dtype, shape));
  if (ctx.has_input(kFusedResidualInput)) KILN_RETURN_IF_ERROR(check_residual_dtype(ctx.node(), ctx.input_type(kFusedResidualInput).dtype, y.dtype));
  ctx.set_output_type(0, y);
  return Status::ok();
}

Status fused_matmul_kernel(KernelContext& ctx) {
  Tensor product = Tensor::allocate(ctx.input(1)->dtype(), ctx.output(0)->shape());
  KILN_ASSIGN_OR_RETURN(const Tensor a, widened(*ctx.input(0), ctx.node(), input_quantization(ctx.node())));
  KILN_RETURN_IF_ERROR(matmul_reference(ctx.node(), a, *ctx.input(1), product));
  return apply_epilogue(ctx, product, ctx.input(2));
}

}  // namespace

void register_fused_ops(OpRegistry& r) {
  // The output may take the residual's buffer: each element of Z is read before the same element of
  // Y is written (the product is computed apart first, or summed into Y by the provider).
  auto fused = [&r](const char* op, ShapeRule rule, Kernel kernel) {
    OpDef def{"kiln", op, 1, with_required_inputs(2, std::move(rule)), std::move(kernel)};
    def.in_place_input = static_cast<int>(kFusedResidualInput);
    r.add(std::move(def));
  };
  fused("FusedConv", fused_conv_infer, fused_conv_kernel);
  fused("FusedMatMul", fused_matmul_infer, fused_matmul_kernel);
}

}  // namespace kiln::ops
