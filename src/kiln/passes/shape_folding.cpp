// Shape folding: Shape and Size read only the static type, so they become constants when the dims
// they report are static; Gather of a Shape output at constant indices becomes a constant when the
// dims it picks are static, even if other dims are symbolic (a dynamic batch leaves the hidden and
// sequence dims static, and PyTorch's exports gather them one by one).
#include "kiln/passes/shape_folding.h"

#include <algorithm>

#include "kiln/ops/op_helpers.h"
#include "kiln/ops/shape_ops.h"
#include "kiln/passes/rewrite_helpers.h"

namespace kiln::passes {

namespace {

// The dims a Shape node reports (possibly symbolic); nullopt when its input's rank is unknown.
std::optional<std::vector<ir::Dim>> reported_dims(const ir::Node& shape_node) {
  const ir::Value* in = shape_node.input(0);
  if (!in || !in->type.shape) return std::nullopt;
  const auto& dims = in->type.shape->dims();
  const auto [start, end] = ops::shape_op_range(shape_node, static_cast<int64_t>(dims.size()));
  return std::vector<ir::Dim>(dims.begin() + start, dims.begin() + end);
}

std::optional<std::vector<int64_t>> static_values(const std::vector<ir::Dim>& dims) {
  std::vector<int64_t> values;
  for (const ir::Dim& d : dims) {
    if (!d.is_static()) return std::nullopt;
    values.push_back(d.value());
  }
  return values;
}

std::optional<Tensor> fold_shape_or_size(const ir::Node& node) {
  const ir::Value* in = node.input(0);
  if (is_onnx_op(node, "Size")) {
    if (!in || !in->type.has_static_shape()) return std::nullopt;
    return Tensor::from_vector<int64_t>(DType::kInt64, {}, {shape_element_count(in->type.shape->static_dims())});
  }
  if (!is_onnx_op(node, "Shape")) return std::nullopt;
  auto dims = reported_dims(node);
  if (!dims) return std::nullopt;
  auto values = static_values(*dims);
  if (!values) return std::nullopt;
  return ops::make_int64_tensor(*values);
}

// Gather(Shape(x), indices) along axis 0 with constant indices picking only static dims.
std::optional<Tensor> fold_gather_of_shape(const ir::Node& node) {
  if (!is_onnx_op(node, "Gather") || node.attr_int("axis", 0) != 0) return std::nullopt;
  const ir::Value* data = node.input(0);
  const ir::Value* indices = node.input(1);
  if (!data || !indices || !indices->is_constant() || !data->producer || !is_onnx_op(*data->producer, "Shape"))
    return std::nullopt;
  auto dims = reported_dims(*data->producer);
  if (!dims) return std::nullopt;
  auto picked = ops::read_int64s(*indices->initializer, "indices");
  if (!picked.is_ok()) return std::nullopt;
  const auto count = static_cast<int64_t>(dims->size());
  std::vector<int64_t> values;
  for (int64_t i : picked.value()) {
    if (i < -count || i >= count) return std::nullopt;  // out of range: let the kernel report it
    const ir::Dim& d = (*dims)[static_cast<size_t>(i < 0 ? i + count : i)];
    if (!d.is_static()) return std::nullopt;
    values.push_back(d.value());
  }
  return Tensor::from_vector<int64_t>(DType::kInt64, indices->initializer->shape(), values);
}

}  // namespace

Result<bool> fold_shapes(ir::Graph& graph, const PassContext& /*ctx*/) {
  std::vector<std::pair<const ir::Node*, Tensor>> folds;
  for (const auto& node : graph.nodes()) {
    if (node->outputs.empty() || !node->outputs[0]) continue;
    std::optional<Tensor> value = fold_shape_or_size(*node);
    if (!value && is_onnx_op(*node, "Gather")) value = fold_gather_of_shape(*node);
    if (value) folds.emplace_back(node.get(), std::move(*value));
  }
  for (auto& [node, value] : folds) replace_node_with_constants(graph, node, {std::move(value)});
  return !folds.empty();
}

}  // namespace kiln::passes
