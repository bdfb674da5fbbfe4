// Op family layout (domain "kiln"): the ops that keep convolution regions in one activation
// layout (activation_layout.h).
//   kiln.InLayout: runs an ai.onnx op on a first input, and gives a first output, stored in
//                  `layout`. Attributes: `op` and `op_version` name the inner op; every other
//                  attribute is the inner op's, but a fused activation (ops/activation.h)
//                  applied to its first output. The activation_layout pass wraps pooling ops and
//                  BatchNormalization in it; normalization_activation_fusion gives the latter a Relu.
//   kiln.Relayout: copies an activation from layout `from` to layout `to` (both default NCHW):
//                  the reorders at a region's edges.
// The reference kernels convert to channels-first around the inner op's reference kernel.
#include "kiln/ops/activation.h"
#include "kiln/ops/activation_layout.h"
#include "kiln/ops/data_movement.h"
#include "kiln/ops/evaluate.h"
#include "kiln/ops/op_families.h"
#include "kiln/ops/op_helpers.h"
#include "kiln/ops/op_registry.h"

namespace kiln::ops {
namespace {

// The inner op as a node of its own (same inputs and outputs, its own attributes).
Result<ir::Node> inner_node(const ir::Node& node) {
  ir::Node inner;
  inner.name = node.name;
  inner.op_type = node.attr_string("op");
  inner.opset_version = static_cast<int>(node.attr_int("op_version", 0));
  inner.inputs = node.inputs;
  inner.outputs = node.outputs;
  inner.attributes = node.attributes;
  for (const char* own : {"op", "op_version", "layout", "activation", "activation_alpha", "activation_beta"}) inner.attributes.erase(own);
  if (inner.op_type.empty() || inner.opset_version <= 0)
    return invalid_model(node.describe() + ": needs the inner op's `op` and `op_version` attributes");
  return inner;
}

// A stored type converted with `convert` (a shape function of activation_layout.h).
template <class Convert>
Result<ir::TensorType> converted_type(InferenceContext& ctx, const ir::TensorType& t, const char* what, Convert convert) {
  if (!t.shape) return ctx.error(std::string(what) + " needs a known rank");
  Result<ir::Shape> shape = convert(*t.shape);
  if (!shape.is_ok()) return ctx.error(std::string(what) + ": " + shape.status().message());
  return ir::TensorType{t.dtype, shape.value()};
}

Status in_layout_infer(InferenceContext& ctx) {
  KILN_ASSIGN_OR_RETURN(const ActivationLayout layout, layout_attribute(ctx.node(), "layout"));
  if (const std::string unknown = unknown_fused_activation(ctx.node()); !unknown.empty()) return ctx.error(unknown);
  KILN_ASSIGN_OR_RETURN(const ir::Node inner, inner_node(ctx.node()));
  KILN_ASSIGN_OR_RETURN(const OpDef* def, resolve_op(OpRegistry::global(), inner));
  KILN_ASSIGN_OR_RETURN(const ir::TensorType x_first,
                        converted_type(ctx, ctx.input_type(0), "input 0",
                                       [&](const ir::Shape& s) { return channels_first_shape(s, layout); }));
  std::vector<const ir::TensorType*> types{&x_first};
  std::vector<const Tensor*> values{nullptr};
  for (size_t i = 1; i < ctx.input_count(); ++i) {
    types.push_back(ctx.has_input(i) ? &ctx.input_type(i) : nullptr);
    values.push_back(ctx.input_value(i));
  }
  InferenceContext inner_ctx(inner, types, values);
  KILN_RETURN_IF_ERROR(def->infer(inner_ctx));
  for (size_t i = 0; i < ctx.output_count(); ++i) {
    ir::TensorType t = inner_ctx.output_types()[i];
    if (i == 0 && t.shape) {
      KILN_ASSIGN_OR_RETURN(t, converted_type(ctx, t, "output 0", [&](const ir::Shape& s) { return stored_shape(s, layout); }));
    }
    ctx.set_output_type(i, t);
  }
  return Status::ok();
}

Status copy_result(KernelContext& ctx, size_t i, const Tensor& result) {
  Tensor* out = ctx.output(i);
  if (!out) return Status::ok();
  if (result.shape() != out->shape()) return internal_error(ctx.node().describe() + ": output shape disagrees with the rule");
  copy_all_elements(result, *out);
  return Status::ok();
}

Status in_layout_kernel(KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(const ActivationLayout layout, layout_attribute(ctx.node(), "layout"));
  KILN_ASSIGN_OR_RETURN(const ir::Node inner, inner_node(ctx.node()));
  KILN_ASSIGN_OR_RETURN(const OpDef* def, resolve_op(OpRegistry::global(), inner));
  const Tensor x_first = to_channels_first(*ctx.input(0), layout);
  std::vector<const Tensor*> inputs{&x_first};
  for (size_t i = 1; i < ctx.input_count(); ++i) inputs.push_back(ctx.input(i));
  KILN_ASSIGN_OR_RETURN(std::vector<Tensor> outputs, evaluate_node(*def, inner, inputs));
  if (const std::optional<Activation> activation = fused_activation(ctx.node()))
    for (int64_t i = 0; i < outputs[0].element_count(); ++i)
      store_double(outputs[0], i, activation->apply(element_as_double(outputs[0], i)));
  for (size_t i = 0; i < outputs.size(); ++i)
    KILN_RETURN_IF_ERROR(copy_result(ctx, i, i == 0 ? to_stored(outputs[0], layout) : outputs[i]));
  return Status::ok();
}

Status relayout_infer(InferenceContext& ctx) {
  KILN_ASSIGN_OR_RETURN(const ActivationLayout from, layout_attribute(ctx.node(), "from"));
  KILN_ASSIGN_OR_RETURN(const ActivationLayout to, layout_attribute(ctx.node(), "to"));
  KILN_ASSIGN_OR_RETURN(const ir::TensorType first,
                        converted_type(ctx, ctx.input_type(0), "input",
                                       [&](const ir::Shape& s) { return channels_first_shape(s, from); }));
  KILN_ASSIGN_OR_RETURN(const ir::TensorType y,
                        converted_type(ctx, first, "output", [&](const ir::Shape& s) { return stored_shape(s, to); }));
  ctx.set_output_type(0, y);
  return Status::ok();
}

Status relayout_kernel(KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(const ActivationLayout from, layout_attribute(ctx.node(), "from"));
  KILN_ASSIGN_OR_RETURN(const ActivationLayout to, layout_attribute(ctx.node(), "to"));
  return copy_result(ctx, 0, to_stored(to_channels_first(*ctx.input(0), from), to));
}

}  // namespace

void register_layout_ops(OpRegistry& r) {
  r.add({"kiln", "InLayout", 1, with_required_inputs(1, in_layout_infer), in_layout_kernel});
  r.add({"kiln", "Relayout", 1, with_required_inputs(1, relayout_infer), relayout_kernel});
}

}  // namespace kiln::ops
