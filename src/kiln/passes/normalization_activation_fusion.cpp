// normalization_activation_fusion: kiln.InLayout BatchNormalization + Relu -> one node.
#include "kiln/passes/normalization_activation_fusion.h"

#include "kiln/ops/activation.h"
#include "kiln/passes/rewrite_helpers.h"

namespace kiln::passes {
namespace {

bool is_wrapped_batch_norm(const ir::Node& node) {
  return node.domain == "kiln" && node.op_type == "InLayout" && node.attr_string("op") == "BatchNormalization" &&
         !node.has_attr("activation");
}

// The Relu that alone reads the node's only output, when there is one.
ir::Node* sole_relu(const ir::Graph& graph, const ir::Node& node, const std::set<std::string>& captured, const PassContext& ctx) {
  if (node.outputs.empty() || !node.outputs[0]) return nullptr;
  for (size_t i = 1; i < node.outputs.size(); ++i)
    if (node.outputs[i]) return nullptr;
  const ir::Value* out = node.outputs[0];
  if (graph.is_graph_output(out) || captured.count(out->name)) return nullptr;
  const std::vector<ir::Node*> readers = graph.consumers(out);
  if (readers.size() != 1 || !ctx.owns(*readers[0])) return nullptr;
  const std::optional<ops::Activation> activation = ops::activation_of(*readers[0]);
  return activation && activation->is(ops::Elementwise::kRelu) ? readers[0] : nullptr;
}

}  // namespace

Result<bool> fuse_normalization_activations(ir::Graph& graph, const PassContext& ctx) {
  if (!ctx.preferences.prefers(ops::GraphForm::kActivationLayouts)) return false;
  const std::set<std::string> captured = names_captured_by_subgraphs(graph);
  std::vector<std::pair<ir::Node*, ir::Node*>> pairs;
  for (const auto& node : graph.nodes())
    if (ctx.owns(*node) && is_wrapped_batch_norm(*node))
      if (ir::Node* relu = sole_relu(graph, *node, captured, ctx)) pairs.emplace_back(node.get(), relu);
  for (auto& [norm, relu] : pairs) {
    norm->origins = norm->source_nodes();
    for (const std::string& name : relu->source_nodes()) norm->origins.push_back(name);
    ops::set_fused_activation(*norm, *ops::activation_of(*relu));
    ir::Value* out = relu->outputs[0];
    graph.remove_node(relu);
    norm->outputs[0] = out;
    out->producer = norm;
  }
  return finish_rewrite(graph, !pairs.empty());
}

}  // namespace kiln::passes
