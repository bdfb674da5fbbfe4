// Shape folding: Shape (with the start/end attributes of opset 15) and Size read only the static type.
#include "kiln/passes/shape_folding.h"

#include <algorithm>

#include "kiln/passes/rewrite_helpers.h"

namespace kiln::passes {

namespace {

// Shape's output for `dims`: dims[start:end], with negative bounds counted from the end and both
// clamped to [0, rank] (ONNX Shape-15; earlier versions have no attributes and give all dims).
Tensor shape_value(const ir::Node& node, const std::vector<int64_t>& dims) {
  const auto rank = static_cast<int64_t>(dims.size());
  auto clamp_bound = [&](int64_t bound) { return std::clamp(bound < 0 ? bound + rank : bound, int64_t{0}, rank); };
  const int64_t start = clamp_bound(node.attr_int("start", 0));
  const int64_t end = std::max(start, clamp_bound(node.attr_int("end", rank)));
  std::vector<int64_t> slice(dims.begin() + start, dims.begin() + end);
  return Tensor::from_vector<int64_t>(DType::kInt64, {end - start}, slice);
}

// The constant a Shape or Size node computes, when its input's shape is static.
std::optional<Tensor> folded_value(const ir::Node& node) {
  const bool is_shape = is_onnx_op(node, "Shape");
  if (!is_shape && !is_onnx_op(node, "Size")) return std::nullopt;
  const ir::Value* in = node.input(0);
  if (!in || !in->type.has_static_shape() || node.outputs.empty() || !node.outputs[0]) return std::nullopt;
  const std::vector<int64_t> dims = in->type.shape->static_dims();
  if (is_shape) return shape_value(node, dims);
  return Tensor::from_vector<int64_t>(DType::kInt64, {}, {shape_element_count(dims)});
}

}  // namespace

Result<bool> fold_shapes(ir::Graph& graph, const PassContext& ctx) {
  std::vector<std::pair<const ir::Node*, Tensor>> folds;
  for (const auto& node : graph.nodes())
    if (std::optional<Tensor> value = folded_value(*node)) folds.emplace_back(node.get(), std::move(*value));
  for (auto& [node, value] : folds) replace_node_with_constants(graph, node, {std::move(value)});
  return !folds.empty();
}

}  // namespace kiln::passes
