// Graph editing, lookup, ordering and copying.
#include "kiln/ir/graph.h"

#include <algorithm>
#include <functional>
#include <set>
#include <unordered_map>

namespace kiln::ir {

const Attribute* Node::attr(const std::string& key) const {
  auto it = attributes.find(key);
  return it == attributes.end() ? nullptr : &it->second;
}

int64_t Node::attr_int(const std::string& key, int64_t fallback) const {
  const Attribute* a = attr(key);
  return a && a->kind == Attribute::Kind::kInt ? a->i : fallback;
}

float Node::attr_float(const std::string& key, float fallback) const {
  const Attribute* a = attr(key);
  return a && a->kind == Attribute::Kind::kFloat ? a->f : fallback;
}

std::string Node::attr_string(const std::string& key, const std::string& fallback) const {
  const Attribute* a = attr(key);
  return a && a->kind == Attribute::Kind::kString ? a->s : fallback;
}

std::vector<int64_t> Node::attr_ints(const std::string& key, const std::vector<int64_t>& fallback) const {
  const Attribute* a = attr(key);
  return a && a->kind == Attribute::Kind::kInts ? a->ints : fallback;
}

std::vector<float> Node::attr_floats(const std::string& key, const std::vector<float>& fallback) const {
  const Attribute* a = attr(key);
  return a && a->kind == Attribute::Kind::kFloats ? a->floats : fallback;
}

const Tensor* Node::attr_tensor(const std::string& key) const {
  const Attribute* a = attr(key);
  return a && a->kind == Attribute::Kind::kTensor ? &a->t : nullptr;
}

std::string Node::describe() const {
  std::string op = domain.empty() ? op_type : domain + "." + op_type;
  return op + " '" + name + "'";
}

std::vector<std::string> Node::source_nodes() const { return origins.empty() ? std::vector<std::string>{name} : origins; }

Value* Graph::add_value(const std::string& name, TensorType type) {
  auto value = std::make_unique<Value>();
  value->name = name;
  value->type = std::move(type);
  Value* raw = value.get();
  values_.push_back(std::move(value));
  if (!name.empty()) values_by_name_[name] = raw;
  return raw;
}

Value* Graph::add_constant(const std::string& name, Tensor tensor) {
  TensorType type{tensor.dtype(), Shape::from_static(tensor.shape())};
  Value* v = add_value(name, type);
  v->initializer = std::move(tensor);
  return v;
}

Value* Graph::find_value(const std::string& name) const {
  auto it = values_by_name_.find(name);
  return it == values_by_name_.end() ? nullptr : it->second;
}

Value* Graph::find_value_in_scope(const std::string& name) const {
  for (const Graph* g = this; g; g = g->parent_) {
    if (Value* v = g->find_value(name)) return v;
  }
  return nullptr;
}

std::string Graph::unique_name(const std::string& prefix) const {
  if (!find_value_in_scope(prefix)) return prefix;
  for (int i = 1;; ++i) {
    std::string candidate = prefix + "_" + std::to_string(i);
    if (!find_value_in_scope(candidate)) return candidate;
  }
}

Node* Graph::add_node(const std::string& op_type, std::vector<Value*> inputs, std::vector<Value*> outputs,
                      const std::string& name, const std::string& domain, int opset_version) {
  auto node = std::make_unique<Node>();
  node->op_type = op_type;
  node->domain = domain;
  node->opset_version = opset_version;
  node->name = name;
  node->inputs = std::move(inputs);
  node->outputs = std::move(outputs);
  for (Value* out : node->outputs)
    if (out) out->producer = node.get();
  nodes_.push_back(std::move(node));
  return nodes_.back().get();
}

void Graph::remove_node(const Node* node) {
  for (Value* out : node->outputs)
    if (out && out->producer == node) out->producer = nullptr;
  nodes_.erase(std::remove_if(nodes_.begin(), nodes_.end(), [&](const auto& n) { return n.get() == node; }),
               nodes_.end());
}

void for_each_subgraph(const Node& node, const std::function<void(Graph&)>& fn) {
  for (const auto& [key, attr] : node.attributes) {
    if (attr.g) fn(*attr.g);
    for (const auto& g : attr.graphs)
      if (g) fn(*g);
  }
}

bool Node::has_subgraph() const {
  for (const auto& [key, attr] : attributes)
    if (attr.g || !attr.graphs.empty()) return true;
  return false;
}

std::vector<std::string> names_captured_by(const Node& node) {
  std::set<std::string> names;
  for_each_subgraph(node, [&](Graph& sub) {
    for (const auto& name : sub.outer_scope_reads()) names.insert(name);
  });
  return {names.begin(), names.end()};
}

void Graph::rename_value(Value* value, const std::string& name) {
  auto it = values_by_name_.find(value->name);
  if (it != values_by_name_.end() && it->second == value) values_by_name_.erase(it);
  value->name = name;
  if (!name.empty()) values_by_name_[name] = value;
}

std::vector<std::string> Graph::outer_scope_reads() const {
  std::set<std::string> names;
  for (const auto& node : nodes_) {
    for (const Value* in : node->inputs) {
      if (in && !in->producer && !in->is_constant() && !is_graph_input(in)) names.insert(in->name);
    }
    for_each_subgraph(*node, [&](Graph& sub) {
      for (const auto& name : sub.outer_scope_reads()) {
        const Value* local = find_value(name);
        if (!local || (!local->producer && !local->is_constant() && !is_graph_input(local))) names.insert(name);
      }
    });
  }
  for (const Value* out : outputs) {
    if (out && !out->producer && !out->is_constant() && !is_graph_input(out)) names.insert(out->name);
  }
  return {names.begin(), names.end()};
}

std::vector<Node*> Graph::consumers(const Value* value) const {
  std::vector<Node*> result;
  for (const auto& node : nodes_) {
    bool uses = std::find(node->inputs.begin(), node->inputs.end(), value) != node->inputs.end();
    if (!uses) {
      const auto captured = names_captured_by(*node);
      uses = std::find(captured.begin(), captured.end(), value->name) != captured.end();
    }
    if (uses) result.push_back(node.get());
  }
  return result;
}

bool Graph::is_graph_output(const Value* value) const {
  return std::find(outputs.begin(), outputs.end(), value) != outputs.end();
}

bool Graph::is_graph_input(const Value* value) const {
  return std::find(inputs.begin(), inputs.end(), value) != inputs.end();
}

namespace {

// Renames a captured (outer-scope) value inside a subgraph and its own subgraphs.
void rename_capture(Graph& sub, const std::string& from, const std::string& to) {
  Value* captured = sub.find_value(from);
  if (captured && !captured->producer && !captured->is_constant() && !sub.is_graph_input(captured)) {
    sub.rename_value(captured, to);
  }
  for (const auto& node : sub.nodes()) for_each_subgraph(*node, [&](Graph& g) { rename_capture(g, from, to); });
}

}  // namespace

void Graph::replace_all_uses(Value* from, Value* to) {
  for (auto& node : nodes_) {
    std::replace(node->inputs.begin(), node->inputs.end(), from, to);
    for_each_subgraph(*node, [&](Graph& sub) { rename_capture(sub, from->name, to->name); });
  }
  std::replace(outputs.begin(), outputs.end(), from, to);
}

void Graph::remove_unused_values() {
  std::set<const Value*> used(inputs.begin(), inputs.end());
  used.insert(outputs.begin(), outputs.end());
  std::set<std::string> captured;
  for (const auto& node : nodes_) {
    used.insert(node->inputs.begin(), node->inputs.end());
    used.insert(node->outputs.begin(), node->outputs.end());
    for (const auto& name : names_captured_by(*node)) captured.insert(name);
  }
  std::vector<std::unique_ptr<Value>> kept;
  for (auto& v : values_) {
    if (used.count(v.get()) || captured.count(v->name)) {
      kept.push_back(std::move(v));
    } else {
      values_by_name_.erase(v->name);
    }
  }
  values_ = std::move(kept);
}

Status Graph::topological_sort() {
  std::unordered_map<const Node*, size_t> pending;  // producers not yet placed
  std::unordered_map<const Node*, std::vector<Node*>> successors;
  for (const auto& node : nodes_) {
    // A node reads its inputs, and by name every value of this graph its subgraphs read.
    std::vector<const Value*> reads(node->inputs.begin(), node->inputs.end());
    for (const std::string& name : names_captured_by(*node)) reads.push_back(find_value(name));
    std::set<Node*> producers;
    for (const Value* in : reads) {
      if (!in || !in->producer) continue;
      if (in->producer == node.get())
        return invalid_model("graph '" + name_ + "' has a cycle: " + node->describe() + " reads its own output '" +
                             in->name + "'");
      producers.insert(in->producer);
    }
    pending[node.get()] = producers.size();
    for (Node* p : producers) successors[p].push_back(node.get());
  }
  std::vector<Node*> order;
  for (const auto& node : nodes_)
    if (pending[node.get()] == 0) order.push_back(node.get());
  for (size_t i = 0; i < order.size(); ++i)
    for (Node* next : successors[order[i]])
      if (--pending[next] == 0) order.push_back(next);
  if (order.size() != nodes_.size()) {
    for (const auto& node : nodes_)
      if (pending[node.get()] != 0)
        return invalid_model("graph '" + name_ + "' has a cycle through " + node->describe());
  }
  std::unordered_map<const Node*, size_t> rank;
  for (size_t i = 0; i < order.size(); ++i) rank[order[i]] = i;
  std::stable_sort(nodes_.begin(), nodes_.end(),
                   [&](const auto& a, const auto& b) { return rank[a.get()] < rank[b.get()]; });
  return Status::ok();
}

std::unique_ptr<Graph> Graph::clone(const Graph* parent) const {
  auto copy = std::make_unique<Graph>(name_, parent);
  std::unordered_map<const Value*, Value*> map;
  for (const auto& v : values_) {
    Value* c = copy->add_value(v->name, v->type);
    c->initializer = v->initializer;
    map[v.get()] = c;
  }
  auto remap = [&](Value* v) -> Value* { return v ? map.at(v) : nullptr; };
  for (const auto& node : nodes_) {
    std::vector<Value*> ins, outs;
    for (Value* v : node->inputs) ins.push_back(remap(v));
    for (Value* v : node->outputs) outs.push_back(remap(v));
    Node* n = copy->add_node(node->op_type, ins, outs, node->name, node->domain, node->opset_version);
    n->attributes = node->attributes;
    n->origins = node->origins;
    for (auto& [key, attr] : n->attributes) {
      if (attr.g) attr.g = std::shared_ptr<Graph>(attr.g->clone(copy.get()));
      for (auto& g : attr.graphs)
        if (g) g = std::shared_ptr<Graph>(g->clone(copy.get()));
    }
  }
  for (Value* v : inputs) copy->inputs.push_back(remap(v));
  for (Value* v : outputs) copy->outputs.push_back(remap(v));
  return copy;
}

int64_t count_nodes(const Graph& graph) {
  auto count = static_cast<int64_t>(graph.nodes().size());
  for (const auto& node : graph.nodes()) for_each_subgraph(*node, [&](Graph& sub) { count += count_nodes(sub); });
  return count;
}

ParameterStats parameter_stats(const Graph& graph, std::string_view mapped) {
  // Addresses compared as integers: the constants and the mapping are separate objects.
  const auto mapped_begin = reinterpret_cast<uintptr_t>(mapped.data());
  ParameterStats stats;
  for (const auto& v : graph.values()) {
    if (!v->is_constant()) continue;
    const Tensor& t = *v->initializer;
    stats.count += 1;
    stats.elements += t.element_count();
    stats.bytes += static_cast<int64_t>(t.byte_size());
    const uintptr_t offset = reinterpret_cast<uintptr_t>(t.raw_data()) - mapped_begin;  // wraps when below
    if (!mapped.empty() && offset < mapped.size() && t.byte_size() <= mapped.size() - offset)
      stats.mapped_bytes += static_cast<int64_t>(t.byte_size());
  }
  for (const auto& node : graph.nodes()) {
    for_each_subgraph(*node, [&](Graph& sub) {
      ParameterStats s = parameter_stats(sub, mapped);
      stats.count += s.count;
      stats.elements += s.elements;
      stats.bytes += s.bytes;
      stats.mapped_bytes += s.mapped_bytes;
    });
  }
  return stats;
}

const char* attribute_kind_name(Attribute::Kind kind) {
  switch (kind) {
    case Attribute::Kind::kInt: return "int";
    case Attribute::Kind::kFloat: return "float";
    case Attribute::Kind::kString: return "string";
    case Attribute::Kind::kTensor: return "tensor";
    case Attribute::Kind::kGraph: return "graph";
    case Attribute::Kind::kInts: return "ints";
    case Attribute::Kind::kFloats: return "floats";
    case Attribute::Kind::kStrings: return "strings";
    case Attribute::Kind::kTensors: return "tensors";
    case Attribute::Kind::kGraphs: return "graphs";
    case Attribute::Kind::kType: return "type";
  }
  return "unknown";
}

}  // namespace kiln::ir
