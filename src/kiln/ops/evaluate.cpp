// Eager single-node evaluation with the reference kernel.
#include "kiln/ops/evaluate.h"

namespace kiln::ops {

Result<std::vector<ir::TensorType>> infer_concrete_outputs(const OpDef& def, const ir::Node& node,
                                                           const std::vector<const Tensor*>& inputs) {
  std::vector<ir::TensorType> input_types(inputs.size());
  std::vector<const ir::TensorType*> type_ptrs(inputs.size(), nullptr);
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i]) continue;
    input_types[i] = ir::TensorType{inputs[i]->dtype(), ir::Shape::from_static(inputs[i]->shape())};
    type_ptrs[i] = &input_types[i];
  }
  InferenceContext ctx(node, type_ptrs, inputs);
  KILN_RETURN_IF_ERROR(def.infer(ctx));
  std::vector<ir::TensorType> outputs = ctx.output_types();
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (!node.outputs[i]) continue;
    if (ctx.output_values()[i]) {
      outputs[i] = ir::TensorType{ctx.output_values()[i]->dtype(), ir::Shape::from_static(ctx.output_values()[i]->shape())};
    }
    if (!outputs[i].has_static_shape() || outputs[i].dtype == DType::kUndefined)
      return invalid_argument(node.describe() + ": output " + std::to_string(i) + " has no concrete type (" +
                              outputs[i].to_string() + ") even with all inputs known");
  }
  return outputs;
}

namespace {

bool has_container_input(const std::vector<const Value*>& inputs) {
  for (const Value* v : inputs)
    if (v && !v->is_tensor()) return true;
  return false;
}

// Ops whose kernel assigns its outputs (and any op given a sequence or optional): run it on
// undefined outputs and check it gave each one.
Result<std::vector<Value>> evaluate_self_allocating(const OpDef& def, const ir::Node& node,
                                                    const std::vector<const Value*>& inputs, const ValueScope* scope) {
  std::vector<Value> outputs(node.outputs.size());
  std::vector<Value*> output_ptrs(node.outputs.size(), nullptr);
  for (size_t i = 0; i < outputs.size(); ++i)
    if (node.outputs[i]) output_ptrs[i] = &outputs[i];
  KernelContext ctx(node, inputs, output_ptrs, scope);
  KILN_RETURN_IF_ERROR(def.reference(ctx));
  for (size_t i = 0; i < outputs.size(); ++i)
    if (node.outputs[i] && outputs[i].is_tensor() && !outputs[i].tensor().defined())
      return internal_error(node.describe() + ": kernel gave no value for output " + std::to_string(i));
  return outputs;
}

}  // namespace

Result<std::vector<Value>> evaluate_node_values(const OpDef& def, const ir::Node& node,
                                                const std::vector<const Value*>& inputs, const ValueScope* scope) {
  if (def.kernel_allocates_outputs || has_container_input(inputs))
    return evaluate_self_allocating(def, node, inputs, scope);
  std::vector<const Tensor*> tensors;
  for (const Value* v : inputs) tensors.push_back(v ? &v->tensor() : nullptr);
  KILN_ASSIGN_OR_RETURN(std::vector<ir::TensorType> types, infer_concrete_outputs(def, node, tensors));
  std::vector<Value> outputs(types.size());
  std::vector<Value*> output_ptrs(types.size(), nullptr);
  for (size_t i = 0; i < types.size(); ++i) {
    if (!node.outputs[i]) continue;
    outputs[i] = Tensor::allocate(types[i].dtype, types[i].shape->static_dims());
    if (!outputs[i].tensor().defined())
      return allocation_failure(node.describe() + ": cannot allocate output " + std::to_string(i) + " of type " +
                                types[i].to_string());
    output_ptrs[i] = &outputs[i];
  }
  KernelContext ctx(node, inputs, output_ptrs, scope);
  KILN_RETURN_IF_ERROR(def.reference(ctx));
  return outputs;
}

Result<std::vector<Tensor>> evaluate_node(const OpDef& def, const ir::Node& node,
                                          const std::vector<const Tensor*>& inputs, const ValueScope* scope) {
  std::vector<Value> values;
  values.reserve(inputs.size());
  for (const Tensor* t : inputs) values.emplace_back(t ? *t : Tensor());
  std::vector<const Value*> value_ptrs;
  for (size_t i = 0; i < inputs.size(); ++i) value_ptrs.push_back(inputs[i] ? &values[i] : nullptr);
  KILN_ASSIGN_OR_RETURN(std::vector<Value> outputs, evaluate_node_values(def, node, value_ptrs, scope));
  std::vector<Tensor> tensors;
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (!outputs[i].is_tensor())
      return invalid_argument(node.describe() + ": output " + std::to_string(i) + " is a " + outputs[i].describe() +
                              ", not a tensor");
    tensors.push_back(std::move(outputs[i].tensor()));
  }
  return tensors;
}

Result<std::vector<Tensor>> evaluate_op(const std::string& op_type, const std::vector<const Tensor*>& inputs,
                                        const std::map<std::string, ir::Attribute>& attributes, int opset,
                                        size_t output_count) {
  ir::Graph graph;
  std::vector<ir::Value*> ins, outs;
  for (size_t i = 0; i < inputs.size(); ++i)
    ins.push_back(inputs[i] ? graph.add_value("in" + std::to_string(i)) : nullptr);
  for (size_t i = 0; i < output_count; ++i) outs.push_back(graph.add_value("out" + std::to_string(i)));
  ir::Node* node = graph.add_node(op_type, ins, outs, "test_" + op_type, "", opset);
  node->attributes = attributes;
  KILN_ASSIGN_OR_RETURN(const OpDef* def, resolve_op(OpRegistry::global(), *node));
  return evaluate_node(*def, *node, inputs);
}

}  // namespace kiln::ops
