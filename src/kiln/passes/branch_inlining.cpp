// Branch inlining: the taken branch of an If with a constant condition, moved into the graph.
#include "kiln/passes/branch_inlining.h"

#include <map>
#include <memory>

#include "kiln/passes/rewrite_helpers.h"

namespace kiln::passes {

namespace {

// The branch an If with a constant condition takes, or null.
std::shared_ptr<ir::Graph> taken_branch(const ir::Node& node) {
  if (!is_onnx_op(node, "If")) return nullptr;
  const ir::Value* cond = node.input(0);
  if (!cond || !cond->is_constant() || cond->initializer->dtype() != DType::kBool || cond->initializer->element_count() != 1)
    return nullptr;
  const ir::Attribute* branch = node.attr(cond->initializer->data<bool>()[0] ? "then_branch" : "else_branch");
  return branch ? branch->g : nullptr;
}

// Renames, in `g` and the graphs nested in it, the reads of the enclosing value `from` (a graph
// that defines its own `from` shadows it, and keeps its reads).
void rename_outer_reads(ir::Graph& g, const std::string& from, const std::string& to) {
  if (ir::Value* v = g.find_value(from)) {
    if (v->producer || v->is_constant() || g.is_graph_input(v)) return;
    g.rename_value(v, to);
  }
  for (const auto& node : g.nodes()) ir::for_each_subgraph(*node, [&](ir::Graph& sub) { rename_outer_reads(sub, from, to); });
}

// Moves the nodes of `branch` into `graph` in place of `node` (an If), whose outputs its branch
// outputs become.
Status inline_branch(ir::Graph& graph, ir::Node* node, const ir::Graph& branch) {
  if (branch.outputs.size() != node->outputs.size())
    return invalid_model(node->describe() + ": its branch '" + branch.name() + "' gives " + std::to_string(branch.outputs.size()) +
                         " outputs for " + std::to_string(node->outputs.size()));
  std::map<const ir::Value*, ir::Value*> moved;
  // A branch output a branch node computes becomes the If's output itself (once); the others
  // (an enclosing value, a constant, an output given twice) are copied to it by an Identity.
  std::vector<std::pair<ir::Value*, const ir::Value*>> copies;
  for (size_t i = 0; i < branch.outputs.size(); ++i) {
    const ir::Value* out = branch.outputs[i];
    ir::Value* target = node->outputs[i];
    if (!target) continue;
    if (out->producer && !moved.count(out)) moved[out] = target;
    else copies.emplace_back(target, out);
  }
  std::map<std::string, std::string> renamed;
  for (const auto& v : branch.values()) {
    if (moved.count(v.get())) continue;
    ir::Value* enclosing = graph.find_value_in_scope(v->name);
    const bool outer_read = !v->producer && !v->is_constant() && !branch.is_graph_input(v.get());
    if (outer_read) {
      if (!enclosing) return internal_error(node->describe() + ": its branch reads '" + v->name + "', which is not in scope");
      moved[v.get()] = enclosing;
      continue;
    }
    // A body's copy of an enclosing constant (analysis copies small ones in) is that constant.
    if (v->is_constant() && enclosing && enclosing->is_constant() && tensors_equal(*enclosing->initializer, *v->initializer)) {
      moved[v.get()] = enclosing;
      continue;
    }
    const std::string name = enclosing ? graph.unique_name(v->name) : v->name;
    if (name != v->name) renamed[v->name] = name;
    moved[v.get()] = v->is_constant() ? graph.add_constant(name, *v->initializer) : graph.add_value(name, v->type);
  }
  const std::string if_name = node->name;
  graph.remove_node(node);
  for (const auto& n : branch.nodes()) {
    std::vector<ir::Value*> inputs, outputs;
    for (const ir::Value* in : n->inputs) inputs.push_back(in ? moved.at(in) : nullptr);
    for (const ir::Value* out : n->outputs) outputs.push_back(out ? moved.at(out) : nullptr);
    ir::Node* copy = graph.add_node(n->op_type, inputs, outputs, n->name, n->domain, n->opset_version);
    copy->attributes = n->attributes;
    copy->origins = n->source_nodes();
    for (auto& [key, attribute] : copy->attributes) {
      if (attribute.g) attribute.g = attribute.g->clone(&graph);
      for (auto& g : attribute.graphs) g = g ? std::shared_ptr<ir::Graph>(g->clone(&graph)) : nullptr;
    }
    for (const auto& rename : renamed)  // not a structured binding: clang 14 cannot capture those
      ir::for_each_subgraph(*copy, [&](ir::Graph& sub) { rename_outer_reads(sub, rename.first, rename.second); });
  }
  for (const auto& [target, source] : copies)
    graph.add_node("Identity", {moved.at(source)}, {target}, graph.unique_name(if_name + "/output"), "", 1);
  return Status::ok();
}

}  // namespace

Result<bool> inline_constant_branches(ir::Graph& graph, const PassContext&) {
  std::vector<ir::Node*> ifs;
  for (const auto& node : graph.nodes())
    if (taken_branch(*node)) ifs.push_back(node.get());
  for (ir::Node* node : ifs) {
    const std::shared_ptr<ir::Graph> branch = taken_branch(*node);  // kept alive past the node's removal
    KILN_RETURN_IF_ERROR(inline_branch(graph, node, *branch));
  }
  return finish_rewrite(graph, !ifs.empty());
}

}  // namespace kiln::passes
