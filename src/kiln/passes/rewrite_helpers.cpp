// Graph queries and edits shared by the rewrite passes.
#include "kiln/passes/rewrite_helpers.h"

#include <algorithm>
#include <array>

namespace kiln::passes {

bool is_onnx_op(const ir::Node& node, std::string_view op_type) {
  return (node.domain.empty() || node.domain == "ai.onnx") && node.op_type == op_type;
}

bool has_subgraph(const ir::Node& node) {
  for (const auto& [key, attr] : node.attributes)
    if (attr.g || !attr.graphs.empty()) return true;
  return false;
}

bool is_nondeterministic(const ir::Node& node) {
  static constexpr std::array<std::string_view, 6> kRandomOps = {
      "RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike", "Bernoulli", "Multinomial"};
  return std::any_of(kRandomOps.begin(), kRandomOps.end(), [&](std::string_view op) { return is_onnx_op(node, op); });
}

std::vector<std::string> names_captured_by(const ir::Node& node) {
  std::set<std::string> names;
  auto add_reads = [&](const ir::Graph& sub) {
    for (const auto& name : sub.outer_scope_reads()) names.insert(name);
  };
  for (const auto& [key, attr] : node.attributes) {
    if (attr.g) add_reads(*attr.g);
    for (const auto& sub : attr.graphs)
      if (sub) add_reads(*sub);
  }
  return {names.begin(), names.end()};
}

std::set<std::string> names_captured_by_subgraphs(const ir::Graph& graph) {
  std::set<std::string> names;
  for (const auto& node : graph.nodes())
    for (const auto& name : names_captured_by(*node)) names.insert(name);
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

}  // namespace kiln::passes
