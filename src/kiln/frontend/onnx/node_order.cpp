// Kahn's algorithm over a GraphProto, always taking the ready node that comes first in the file.
#include "kiln/frontend/onnx/node_order.h"

#include <functional>
#include <queue>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

namespace kiln::frontend {

namespace {

// Names `node` reads, including every name read inside its subgraphs.
void collect_reads(const onnx::NodeProto& node, std::set<std::string>& names) {
  for (const auto& in : node.input())
    if (!in.empty()) names.insert(in);
  for (const auto& attr : node.attribute()) {
    if (attr.has_g())
      for (const auto& n : attr.g().node()) collect_reads(n, names);
    for (const auto& g : attr.graphs())
      for (const auto& n : g.node()) collect_reads(n, names);
  }
}

void sort_subgraphs(onnx::GraphProto& graph) {
  for (auto& node : *graph.mutable_node()) {
    for (auto& attr : *node.mutable_attribute()) {
      if (attr.has_g()) sort_nodes(*attr.mutable_g());
      for (auto& g : *attr.mutable_graphs()) sort_nodes(g);
    }
  }
}

}  // namespace

void sort_nodes(onnx::GraphProto& graph) {
  sort_subgraphs(graph);
  const int n = graph.node_size();
  std::unordered_map<std::string, int> producer;
  for (int i = 0; i < n; ++i)
    for (const auto& out : graph.node(i).output())
      if (!out.empty()) producer.emplace(out, i);
  std::vector<int> pending(n, 0);
  std::vector<std::vector<int>> successors(n);
  for (int i = 0; i < n; ++i) {
    std::set<std::string> reads;
    collect_reads(graph.node(i), reads);
    std::set<int> deps;
    for (const auto& name : reads) {
      auto it = producer.find(name);
      if (it != producer.end() && it->second != i) deps.insert(it->second);
    }
    pending[i] = static_cast<int>(deps.size());
    for (int d : deps) successors[d].push_back(i);
  }
  std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
  for (int i = 0; i < n; ++i)
    if (pending[i] == 0) ready.push(i);
  std::vector<int> order;
  while (!ready.empty()) {
    int i = ready.top();
    ready.pop();
    order.push_back(i);
    for (int s : successors[i])
      if (--pending[s] == 0) ready.push(s);
  }
  if (static_cast<int>(order.size()) != n) return;
  google::protobuf::RepeatedPtrField<onnx::NodeProto> sorted;
  for (int i : order) *sorted.Add() = std::move(*graph.mutable_node(i));
  graph.mutable_node()->Swap(&sorted);
}

}  // namespace kiln::frontend
