// channel_shuffle_fusion: Reshape -> Transpose -> Reshape channel shuffles to kiln.ChannelShuffle.
#include "kiln/passes/channel_shuffle_fusion.h"

#include <optional>
#include <set>

#include "kiln/passes/rewrite_helpers.h"

namespace kiln::passes {
namespace {

std::optional<std::vector<int64_t>> static_dims(const ir::Value* v) {
  if (!v || !v->type.is_tensor() || !v->type.shape || !v->type.shape->is_static()) return std::nullopt;
  return v->type.shape->static_dims();
}

// The node reading `v`, when it is the only reader and `v` is not a graph output or captured.
ir::Node* sole_reader(const ir::Graph& graph, const ir::Value* v, const std::set<std::string>& captured) {
  if (graph.is_graph_output(v) || captured.count(v->name)) return nullptr;
  const std::vector<ir::Node*> readers = graph.consumers(v);
  return readers.size() == 1 ? readers[0] : nullptr;
}

struct Shuffle {
  ir::Node* split;      // Reshape x [N, C, ...] -> [N, g, C/g, ...]
  ir::Node* transpose;  // swaps axes 1 and 2
  ir::Node* merge;      // Reshape -> [N, C, ...]
  int64_t groups;
};

// The shuffle whose Transpose is `t`, when the three nodes form one.
std::optional<Shuffle> shuffle_at(const ir::Graph& graph, ir::Node& t, const std::set<std::string>& captured) {
  if (!is_onnx_op(t, "Transpose") || t.inputs.size() != 1) return std::nullopt;
  ir::Node* split = t.inputs[0] ? t.inputs[0]->producer : nullptr;
  if (!split || !is_onnx_op(*split, "Reshape") || sole_reader(graph, t.inputs[0], captured) != &t) return std::nullopt;
  ir::Node* merge = sole_reader(graph, t.outputs[0], captured);
  if (!merge || !is_onnx_op(*merge, "Reshape") || merge->input(0) != t.outputs[0]) return std::nullopt;
  const auto x = static_dims(split->input(0)), grouped = static_dims(split->outputs[0]), y = static_dims(merge->outputs[0]);
  if (!x || !grouped || !y || *x != *y || x->size() < 2 || grouped->size() != x->size() + 1) return std::nullopt;
  // [N, g, C/g, rest...] with g * C/g = C and the rest as x's.
  const int64_t groups = (*grouped)[1];
  if ((*grouped)[0] != (*x)[0] || groups < 2 || groups * (*grouped)[2] != (*x)[1]) return std::nullopt;
  for (size_t i = 2; i < x->size(); ++i)
    if ((*grouped)[i + 1] != (*x)[i]) return std::nullopt;
  std::vector<int64_t> swap(grouped->size());
  for (size_t i = 0; i < swap.size(); ++i) swap[i] = static_cast<int64_t>(i);
  std::swap(swap[1], swap[2]);
  if (t.attr_ints("perm") != swap) return std::nullopt;
  return Shuffle{split, &t, merge, groups};
}

}  // namespace

Result<bool> fuse_channel_shuffles(ir::Graph& graph, const PassContext&) {
  const std::set<std::string> captured = names_captured_by_subgraphs(graph);
  std::vector<Shuffle> found;
  for (const auto& node : graph.nodes())
    if (std::optional<Shuffle> s = shuffle_at(graph, *node, captured)) found.push_back(*s);
  for (const Shuffle& s : found) {
    ir::Value* x = s.split->inputs[0];
    ir::Value* y = s.merge->outputs[0];
    const std::string name = s.transpose->name;
    std::vector<std::string> origins;
    for (const ir::Node* n : {s.split, s.transpose, s.merge})
      for (const std::string& o : n->source_nodes()) origins.push_back(o);
    for (ir::Node* n : {s.merge, s.transpose, s.split}) graph.remove_node(n);
    ir::Node* shuffle = graph.add_node("ChannelShuffle", {x}, {y}, name, "kiln", 1);
    shuffle->attributes["groups"] = ir::Attribute::of_int(s.groups);
    shuffle->origins = origins;
  }
  return finish_rewrite(graph, !found.empty());
}

}  // namespace kiln::passes
