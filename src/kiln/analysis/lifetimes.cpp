// Lifetime computation over the graph's node order.
#include "kiln/analysis/lifetimes.h"

#include <map>
#include <set>

namespace kiln::analysis {

std::vector<Lifetime> compute_lifetimes(const ir::Graph& graph) {
  std::map<const ir::Value*, Lifetime> by_value;
  std::vector<const ir::Value*> order;
  const auto& nodes = graph.nodes();
  for (size_t step = 0; step < nodes.size(); ++step) {
    const ir::Node& node = *nodes[step];
    for (const ir::Value* in : node.inputs) {
      auto it = by_value.find(in);
      if (it != by_value.end()) it->second.last_step = static_cast<int64_t>(step);
    }
    // Subgraphs read outer values by name.
    std::set<std::string> captured;
    for (const auto& [key, attr] : node.attributes) {
      if (attr.g) for (const auto& n : attr.g->outer_scope_reads()) captured.insert(n);
      for (const auto& g : attr.graphs)
        if (g) for (const auto& n : g->outer_scope_reads()) captured.insert(n);
    }
    for (const std::string& name : captured) {
      auto it = by_value.find(graph.find_value(name));
      if (it != by_value.end()) it->second.last_step = static_cast<int64_t>(step);
    }
    for (const ir::Value* out : node.outputs) {
      if (!out || graph.is_graph_output(out)) continue;
      by_value[out] = Lifetime{out, static_cast<int64_t>(step), static_cast<int64_t>(step)};
      order.push_back(out);
    }
  }
  std::vector<Lifetime> result;
  result.reserve(order.size());
  for (const ir::Value* v : order) result.push_back(by_value[v]);
  return result;
}

}  // namespace kiln::analysis
