// unit_transpose_elimination: Transpose of size-1 dims only -> Reshape to the output's dims.
#include "kiln/passes/unit_transpose_elimination.h"

#include <algorithm>
#include <optional>
#include <string>

#include "kiln/ops/data_movement.h"
#include "kiln/passes/rewrite_helpers.h"

namespace kiln::passes {
namespace {

constexpr int kFirstReshapeWithShapeInput = 5;

bool is_unit(const ir::Dim& d) { return d.is_static() && d.value() == 1; }

// The Transpose's output dims when they are all known and the transpose moves only size-1 dims.
std::optional<std::vector<int64_t>> relabelled_dims(const ir::Node& transpose) {
  if (!is_onnx_op(transpose, "Transpose") || transpose.opset_version < kFirstReshapeWithShapeInput) return std::nullopt;
  const ir::Value* x = transpose.input(0);
  const ir::Value* y = transpose.outputs.empty() ? nullptr : transpose.outputs[0];
  if (!x || !y || !x->type.is_tensor() || !x->type.shape || !y->type.shape || !y->type.shape->is_static())
    return std::nullopt;
  const std::vector<ir::Dim>& dims = x->type.shape->dims();
  const Result<std::vector<int64_t>> perm = ops::transpose_perm(transpose, dims.size());
  if (!perm.is_ok() || !transpose_keeps_memory_order(dims, perm.value())) return std::nullopt;
  std::vector<int64_t> out = y->type.shape->static_dims();
  // Reshape reads a 0 as "keep the input's dim" (allowzero 0): empty tensors stay Transposes.
  if (std::find(out.begin(), out.end(), 0) != out.end()) return std::nullopt;
  return out;
}

}  // namespace

bool transpose_keeps_memory_order(const std::vector<ir::Dim>& dims, const std::vector<int64_t>& perm) {
  if (perm.size() != dims.size()) return false;
  int64_t last = -1;
  for (int64_t axis : perm) {
    if (axis < 0 || axis >= static_cast<int64_t>(dims.size())) return false;
    if (is_unit(dims[static_cast<size_t>(axis)])) continue;
    if (axis < last) return false;
    last = axis;
  }
  return true;
}

Result<bool> eliminate_unit_transposes(ir::Graph& graph, const PassContext&) {
  std::vector<std::pair<ir::Node*, std::vector<int64_t>>> found;
  for (const auto& node : graph.nodes())
    if (std::optional<std::vector<int64_t>> dims = relabelled_dims(*node)) found.emplace_back(node.get(), *dims);
  for (auto& [transpose, dims] : found) {
    const int64_t rank = static_cast<int64_t>(dims.size());
    ir::Value* x = transpose->inputs[0];
    ir::Value* y = transpose->outputs[0];
    const std::string name = transpose->name;
    const int opset = transpose->opset_version;
    const std::vector<std::string> origins = transpose->source_nodes();
    graph.remove_node(transpose);
    ir::Value* shape =
        graph.add_constant(graph.unique_name(name + "_shape"), Tensor::from_vector<int64_t>(DType::kInt64, {rank}, dims));
    ir::Node* reshape = graph.add_node("Reshape", {x, shape}, {y}, graph.unique_name(name + "_as_reshape"), "", opset);
    reshape->origins = origins;
  }
  return finish_rewrite(graph, !found.empty());
}

}  // namespace kiln::passes
