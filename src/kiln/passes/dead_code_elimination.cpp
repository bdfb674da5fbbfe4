// Dead code elimination in one backward sweep: nodes are in execution order, so by the time a node
// is reached every reader of its outputs has been seen (and dropped if it was dead itself). Values a
// node's subgraphs capture by name count as read by that node.
#include "kiln/passes/dead_code_elimination.h"

#include <unordered_map>

#include "kiln/passes/rewrite_helpers.h"

namespace kiln::passes {

namespace {

// Every value the node reads: its inputs and the values its subgraphs capture from this graph.
std::vector<const ir::Value*> values_read_by(const ir::Graph& graph, const ir::Node& node) {
  std::vector<const ir::Value*> reads(node.inputs.begin(), node.inputs.end());
  for (const auto& name : names_captured_by(node)) reads.push_back(graph.find_value(name));
  return reads;
}

}  // namespace

Result<bool> eliminate_dead_code(ir::Graph& graph, const PassContext& ctx) {
  std::unordered_map<const ir::Value*, int> readers;
  for (const ir::Value* out : graph.outputs) ++readers[out];
  for (const auto& node : graph.nodes())
    for (const ir::Value* v : values_read_by(graph, *node)) ++readers[v];

  std::vector<const ir::Node*> dead;
  for (auto it = graph.nodes().rbegin(); it != graph.nodes().rend(); ++it) {
    const ir::Node& node = **it;
    bool live = false;
    for (const ir::Value* out : node.outputs) live = live || (out && readers[out] > 0);
    if (live) continue;
    dead.push_back(&node);
    for (const ir::Value* v : values_read_by(graph, node)) --readers[v];
  }
  for (const ir::Node* node : dead) graph.remove_node(node);

  const size_t values_before = graph.values().size();
  graph.remove_unused_values();
  return !dead.empty() || graph.values().size() != values_before;
}

}  // namespace kiln::passes
