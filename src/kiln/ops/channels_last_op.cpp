// Op family layout (domain "kiln"): kiln.ChannelsLast runs an ai.onnx op on a channels-last first
// input and gives a channels-last first output. Attributes: `op` and `op_version` name the inner op;
// every other attribute is the inner op's. The channels_last pass wraps pooling ops in it so
// activations stay channels-last between convolutions; the reference kernel transposes around the
// inner op's reference kernel.
#include "kiln/ops/channels_last.h"
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
  inner.attributes.erase("op");
  inner.attributes.erase("op_version");
  if (inner.op_type.empty() || inner.opset_version <= 0)
    return invalid_model(node.describe() + ": needs the inner op's `op` and `op_version` attributes");
  return inner;
}

Status channels_last_infer(InferenceContext& ctx) {
  KILN_ASSIGN_OR_RETURN(const ir::Node inner, inner_node(ctx.node()));
  KILN_ASSIGN_OR_RETURN(const OpDef* def, resolve_op(OpRegistry::global(), inner));
  const ir::TensorType& x = ctx.input_type(0);
  if (!x.shape || x.shape->rank() < 3) return ctx.error("the channels-last input needs a known rank of at least 3");
  ir::TensorType x_first = x;
  x_first.shape = permuted(*x.shape, to_channels_first(x.shape->rank()));
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
    if (i == 0 && t.shape) t.shape = permuted(*t.shape, to_channels_last(t.shape->rank()));
    ctx.set_output_type(i, t);
  }
  return Status::ok();
}

Status channels_last_kernel(KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(const ir::Node inner, inner_node(ctx.node()));
  KILN_ASSIGN_OR_RETURN(const OpDef* def, resolve_op(OpRegistry::global(), inner));
  const Tensor& x = *ctx.input(0);
  const Tensor x_first = permute_tensor(x, to_channels_first(x.rank()));
  std::vector<const Tensor*> inputs{&x_first};
  for (size_t i = 1; i < ctx.input_count(); ++i) inputs.push_back(ctx.input(i));
  KILN_ASSIGN_OR_RETURN(std::vector<Tensor> outputs, evaluate_node(*def, inner, inputs));
  for (size_t i = 0; i < outputs.size(); ++i) {
    Tensor* out = ctx.output(i);
    if (!out) continue;
    const Tensor result = i == 0 ? permute_tensor(outputs[0], to_channels_last(outputs[0].rank())) : outputs[i];
    if (result.shape() != out->shape()) return internal_error(ctx.node().describe() + ": output shape disagrees with the rule");
    copy_all_elements(result, *out);
  }
  return Status::ok();
}

}  // namespace

void register_layout_ops(OpRegistry& r) {
  r.add({"kiln", "ChannelsLast", 1, with_required_inputs(1, channels_last_infer), channels_last_kernel});
}

}  // namespace kiln::ops
