// Graph verifier: single producers, defined inputs, acyclic order, consistent constant types.
#include "kiln/ir/verifier.h"

#include <set>
#include <unordered_map>

namespace kiln::ir {

namespace {

Status verify_constant_types(const Graph& graph) {
  for (const auto& v : graph.values()) {
    if (!v->is_constant()) continue;
    const Tensor& t = *v->initializer;
    if (v->type.dtype != DType::kUndefined && v->type.dtype != t.dtype())
      return invalid_model("constant '" + v->name + "' holds " + dtype_name(t.dtype()) + " data but is declared " +
                           v->type.to_string());
    if (v->type.shape && v->type.shape->is_static() && v->type.shape->static_dims() != t.shape())
      return invalid_model("constant '" + v->name + "' has shape " + shape_to_string(t.shape()) +
                           " but is declared " + v->type.to_string());
  }
  return Status::ok();
}

Status verify_producers(const Graph& graph) {
  std::unordered_map<const Value*, const Node*> producer;
  for (const auto& node : graph.nodes()) {
    for (const Value* out : node->outputs) {
      if (!out) continue;
      if (out->is_constant() || graph.is_graph_input(out))
        return invalid_model(node->describe() + " writes '" + out->name + "', which is a graph input or constant");
      auto [it, fresh] = producer.emplace(out, node.get());
      if (!fresh)
        return invalid_model("value '" + out->name + "' is produced by both " + it->second->describe() + " and " +
                             node->describe());
    }
  }
  for (const auto& [value, node] : producer)
    if (value->producer != node)
      return internal_error("value '" + value->name + "' does not record " + node->describe() + " as its producer");
  return Status::ok();
}

// Checks that nodes are ordered so every input, and every value of this graph their subgraphs
// read, is available when the node runs.
Status verify_order(const Graph& graph) {
  std::set<const Value*> available(graph.inputs.begin(), graph.inputs.end());
  for (const auto& v : graph.values())
    if (v->is_constant()) available.insert(v.get());
  for (const auto& node : graph.nodes()) {
    for (const Value* in : node->inputs) {
      if (!in || available.count(in)) continue;
      if (in->producer)
        return invalid_model(node->describe() + " reads '" + in->name + "' before " + in->producer->describe() +
                             " produces it (a cycle or an unordered graph)");
      if (!graph.parent() || !graph.parent()->find_value_in_scope(in->name))
        return invalid_model(node->describe() + " reads '" + in->name +
                             "', which is not a graph input, an initializer or any node's output");
    }
    for (const std::string& name : names_captured_by(*node)) {
      const Value* captured = graph.find_value(name);
      if (captured && captured->producer && !available.count(captured))
        return invalid_model(node->describe() + "'s subgraph reads '" + name + "' before " +
                             captured->producer->describe() + " produces it (a cycle or an unordered graph)");
    }
    for (const Value* out : node->outputs)
      if (out) available.insert(out);
  }
  for (const Value* out : graph.outputs) {
    if (!out) return invalid_model("graph '" + graph.name() + "' has an empty output");
    if (!available.count(out) && !(graph.parent() && graph.parent()->find_value_in_scope(out->name)))
      return invalid_model("graph output '" + out->name + "' is never produced");
  }
  return Status::ok();
}

}  // namespace

Status verify(const Graph& graph) {
  KILN_RETURN_IF_ERROR(verify_constant_types(graph));
  KILN_RETURN_IF_ERROR(verify_producers(graph));
  KILN_RETURN_IF_ERROR(verify_order(graph));
  for (const auto& node : graph.nodes()) {
    for (const auto& [key, attr] : node->attributes) {
      if (attr.g) KILN_RETURN_IF_ERROR(verify(*attr.g).with_context(node->describe() + " attribute '" + key + "'"));
      for (const auto& g : attr.graphs)
        if (g) KILN_RETURN_IF_ERROR(verify(*g).with_context(node->describe() + " attribute '" + key + "'"));
    }
  }
  return Status::ok();
}

}  // namespace kiln::ir
