// Op family fused (domain "kiln"): a product followed by its epilogue, the nodes the fusion passes
// make. Y = activation(P + bias + Z), with an optional residual Z of Y's shape and an optional
// `activation` (see activation.h).
//   kiln.FusedConv:   P = Conv(X, W), bias per output channel (input 2, as Conv's B); attributes
//                     are Conv's plus `layout`, the activation layout of Y and Z (NCHW by
//                     default, NHWC, NCHW8c, NCHW16c: activation_layout.h), and `input_layout`,
//                     X's (default: `layout`). W stays [M, C/group, kH, kW].
//   kiln.FusedMatMul: P = MatMul(A, B), bias along the last dim (input 2, shape [N]).
// Reference kernels are Conv's and MatMul's, so every provider's fused kernel is checked against
// the unfused math.
#include "kiln/ops/fused_product_inputs.h"
#include "kiln/ops/activation.h"
#include "kiln/ops/activation_layout.h"
#include "kiln/ops/conv.h"
#include "kiln/ops/data_movement.h"
#include "kiln/ops/matmul.h"
#include "kiln/ops/op_families.h"
#include "kiln/ops/op_helpers.h"
#include "kiln/ops/op_registry.h"

namespace kiln::ops {
namespace {


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
  ir::TensorType y{x.dtype, shape};
  if (ctx.has_input(3)) {
    const ir::TensorType& z = ctx.input_type(3);
    if (z.dtype != x.dtype || (z.shape && shape && !(z.shape->rank() == shape->rank())))
      return ctx.error("residual " + z.to_string() + " does not match the output " + y.to_string());
  }
  ctx.set_output_type(0, y);
  return Status::ok();
}

Status apply_epilogue(KernelContext& ctx, const Tensor& product, const Tensor* bias);

Status fused_conv_kernel(KernelContext& ctx) {
  const ir::Node& node = ctx.node();
  KILN_ASSIGN_OR_RETURN(const ConvLayouts layouts, conv_layouts(node));
  const Tensor x = to_channels_first(*ctx.input(0), layouts.input);
  Tensor& out = *ctx.output(0);
  Tensor y = Tensor::allocate(out.dtype(), channels_first_dims(out.shape(), layouts.output));
  KILN_RETURN_IF_ERROR(conv_reference(node, x, *ctx.input(1), ctx.input(2), y));
  return apply_epilogue(ctx, to_stored(y, layouts.output), nullptr);
}

// ---- shared epilogue ----

// out = activation(product + bias + Z): bias (when given) runs along the last dim.
Status apply_epilogue(KernelContext& ctx, const Tensor& product, const Tensor* bias) {
  Tensor& out = *ctx.output(0);
  const Tensor* z = ctx.input(kFusedResidualInput);
  if (z && z->shape() != out.shape())
    return ctx.error("residual shape " + shape_to_string(z->shape()) + " differs from the output's " + shape_to_string(out.shape()));
  const int64_t n = out.rank() ? out.shape().back() : 1;
  if (bias && bias->element_count() != n) return ctx.error("bias must hold one value per output column");
  const std::optional<Activation> activation = fused_activation(ctx.node());
  for (int64_t i = 0; i < out.element_count(); ++i) {
    double v = element_as_double(product, i) + (z ? element_as_double(*z, i) : 0.0) + (bias ? element_as_double(*bias, i % n) : 0.0);
    store_double(out, i, activation ? activation->apply(v) : v);
  }
  return Status::ok();
}

// ---- kiln.FusedMatMul ----

Status fused_matmul_infer(InferenceContext& ctx) {
  if (const std::string unknown = unknown_fused_activation(ctx.node()); !unknown.empty()) return ctx.error(unknown);
  KILN_ASSIGN_OR_RETURN(std::optional<ir::Shape> shape, matmul_output_shape(ctx, 0, 1));
  if (ctx.has_input(2) && ctx.input_type(2).shape && shape && ctx.input_type(2).shape->rank() != 1)
    return ctx.error("bias must be 1-D, got " + ctx.input_type(2).to_string());
  ctx.set_output_type(0, ir::TensorType{ctx.input_type(0).dtype, shape});
  return Status::ok();
}

Status fused_matmul_kernel(KernelContext& ctx) {
  Tensor product = Tensor::allocate(ctx.output(0)->dtype(), ctx.output(0)->shape());
  KILN_RETURN_IF_ERROR(matmul_reference(ctx.node(), *ctx.input(0), *ctx.input(1), product));
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
