// Graph queries and edits shared by the rewrite passes.
#include "kiln/passes/rewrite_helpers.h"

#include <algorithm>
#include <array>
#include <cstring>

namespace kiln::passes {

bool is_onnx_op(const ir::Node& node, std::string_view op_type) {
  return (node.domain.empty() || node.domain == "ai.onnx") && node.op_type == op_type;
}

bool tensors_equal(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype() || a.shape() != b.shape()) return false;
  if (a.dtype() != DType::kString)
    return a.byte_size() == 0 || std::memcmp(a.raw_data(), b.raw_data(), a.byte_size()) == 0;
  return std::equal(a.data<std::string>(), a.data<std::string>() + a.element_count(), b.data<std::string>());
}

std::set<std::string> names_captured_by_subgraphs(const ir::Graph& graph) {
  std::set<std::string> names;
  for (const auto& node : graph.nodes())
    for (const auto& name : ir::names_captured_by(*node)) names.insert(name);
  return names;
}

void replace_node_with_constants(ir::Graph& graph, const ir::Node* node, std::vector<Tensor> values) {
  for (size_t i = 0; i < node->outputs.size() && i < values.size(); ++i) {
    ir::Value* out = node->outputs[i];
    if (!out) continue;
    out->type = ir::TensorType{values[i].dtype(), ir::Shape::from_static(values[i].shape())};
    out->initializer = std::move(values[i]);
  }
  graph.remove_node(node);
}

Result<bool> finish_rewrite(ir::Graph& graph, bool changed) {
  if (!changed) return false;
  graph.remove_unused_values();
  KILN_RETURN_IF_ERROR(graph.topological_sort());
  return true;
}

}  // namespace kiln::passes
