// GradientBuilder: emitting backward nodes in the model's opset, and undoing broadcasting.
#include "kiln/autodiff/gradient_builder.h"

#include "kiln/ops/op_helpers.h"

namespace kiln::autodiff {

Status GradientBuilder::error(const std::string& message) const {
  return invalid_model("Gradient '" + origin_ + "': " + message);
}

ir::Value* GradientBuilder::op(const std::string& op_type, std::vector<ir::Value*> inputs,
                               std::map<std::string, ir::Attribute> attributes) {
  ir::Value* out = graph_.add_value(graph_.unique_name(origin_ + "/" + op_type));
  ir::Node* node = graph_.add_node(op_type, std::move(inputs), {out}, graph_.unique_name(origin_ + "/" + op_type + "_node"),
                                   "", opset_);
  node->attributes = std::move(attributes);
  return out;
}

Result<ir::Value*> GradientBuilder::scalar(const ir::Value* like, double value) {
  if (!like->type.is_tensor() || like->type.dtype == DType::kUndefined)
    return error("value '" + like->name + "' has no known element type");
  Tensor t = Tensor::allocate(like->type.dtype, {});
  ops::store_double(t, 0, value);
  return graph_.add_constant(graph_.unique_name(origin_ + "/constant"), std::move(t));
}

Result<ir::Value*> GradientBuilder::filled_like(ir::Value* like, double value) {
  if (like->type.has_static_shape()) {
    Tensor t = Tensor::allocate(like->type.dtype, like->type.shape->static_dims());
    for (int64_t i = 0; i < t.element_count(); ++i) ops::store_double(t, i, value);
    return graph_.add_constant(graph_.unique_name(origin_ + "/constant"), std::move(t));
  }
  if (opset_ < 9) return error("value '" + like->name + "' has a dynamic shape, which needs ConstantOfShape (opset 9+)");
  KILN_ASSIGN_OR_RETURN(ir::Value* one, scalar(like, value));
  Tensor fill = one->initializer->reshaped({1});
  return op("ConstantOfShape", {op("Shape", {like})}, {{"value", ir::Attribute::of_tensor(std::move(fill))}});
}

Result<ir::Value*> GradientBuilder::transpose_last_two(ir::Value* v) {
  if (!v->type.is_tensor() || !v->type.shape || v->type.shape->rank() < 2)
    return error("MatMul operand '" + v->name + "' needs a known rank of at least 2");
  std::vector<int64_t> perm(v->type.shape->rank());
  for (size_t i = 0; i < perm.size(); ++i) perm[i] = static_cast<int64_t>(i);
  std::swap(perm[perm.size() - 1], perm[perm.size() - 2]);
  return op("Transpose", {v}, {{"perm", ir::Attribute::of_ints(perm)}});
}

Result<ir::Value*> GradientBuilder::sum_to_shape_of(ir::Value* grad, const ir::Value* result, const ir::Value* operand) {
  const ir::TensorType& r = result->type;
  const ir::TensorType& o = operand->type;
  if (!r.shape || !o.shape) return error("the shapes of '" + result->name + "' and '" + operand->name + "' must be known");
  if (*r.shape == *o.shape) return grad;
  if (!r.shape->is_static() || !o.shape->is_static())
    return error("'" + operand->name + "' " + o.shape->to_string() + " is broadcast to " + r.shape->to_string() +
                 " with dims not known statically");
  const std::vector<int64_t> out_dims = r.shape->static_dims(), in_dims = o.shape->static_dims();
  const size_t lead = out_dims.size() - in_dims.size();
  std::vector<int64_t> axes;
  for (size_t i = 0; i < out_dims.size(); ++i)
    if (i < lead || (in_dims[i - lead] == 1 && out_dims[i] != 1)) axes.push_back(static_cast<int64_t>(i));
  std::map<std::string, ir::Attribute> keep{{"keepdims", ir::Attribute::of_int(1)}};
  ir::Value* summed;
  if (opset_ >= 13) {
    ir::Value* axes_input = graph_.add_constant(graph_.unique_name(origin_ + "/axes"),
                                                Tensor::from_vector<int64_t>(DType::kInt64, {static_cast<int64_t>(axes.size())}, axes));
    summed = op("ReduceSum", {grad, axes_input}, keep);
  } else {
    keep["axes"] = ir::Attribute::of_ints(axes);
    summed = op("ReduceSum", {grad}, keep);
  }
  if (opset_ < 5) return op("Reshape", {summed}, {{"shape", ir::Attribute::of_ints(in_dims)}});
  ir::Value* shape = graph_.add_constant(graph_.unique_name(origin_ + "/shape"),
                                         Tensor::from_vector<int64_t>(DType::kInt64, {static_cast<int64_t>(in_dims.size())}, in_dims));
  return op("Reshape", {summed, shape});
}

}  // namespace kiln::autodiff
