// Common subexpression elimination. Candidates are bucketed by a cheap hash (for constants: dtype,
// shape and, only when several share those, a sample of the bytes) and compared exactly within a
// bucket.
// Nodes are visited in order, so once a duplicate is merged its readers can match in turn.
#include "kiln/passes/common_subexpression_elimination.h"

#include <bit>
#include <cstring>
#include <functional>
#include <map>
#include <string_view>
#include <unordered_map>

#include "kiln/ops/op_registry.h"
#include "kiln/passes/rewrite_helpers.h"

namespace kiln::passes {

namespace {

void hash_combine(size_t& seed, size_t value) { seed ^= value + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2); }

// Hash of at most kSamples evenly spaced runs of bytes: a model's weights are hundreds of MB, and
// equal hashes are compared in full anyway.
size_t sampled_bytes_hash(const char* bytes, size_t size) {
  constexpr size_t kSamples = 64, kRun = 16;
  if (size <= kSamples * kRun) return std::hash<std::string_view>()(std::string_view(bytes, size));
  size_t h = 0;
  const size_t stride = (size - kRun) / (kSamples - 1);
  for (size_t i = 0; i < kSamples; ++i) hash_combine(h, std::hash<std::string_view>()(std::string_view(bytes + i * stride, kRun)));
  return h;
}

size_t tensor_hash(const Tensor& t) {
  size_t h = std::hash<int>()(static_cast<int>(t.dtype()));
  for (int64_t d : t.shape()) hash_combine(h, std::hash<int64_t>()(d));
  if (t.dtype() == DType::kString) {
    for (int64_t i = 0; i < t.element_count(); ++i)
      hash_combine(h, std::hash<std::string>()(t.data<std::string>()[i]));
  } else {
    hash_combine(h, sampled_bytes_hash(static_cast<const char*>(t.raw_data()), t.byte_size()));
  }
  return h;
}

bool tensor_lists_equal(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), tensors_equal);
}

// Floats compare by bits: 0.0 and -0.0 differ, a NaN equals itself.
bool floats_equal(const std::vector<float>& a, const std::vector<float>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                    [](float x, float y) { return std::bit_cast<uint32_t>(x) == std::bit_cast<uint32_t>(y); });
}

// Attributes of nodes without subgraphs (graph kinds never reach here).
bool attributes_equal(const ir::Attribute& a, const ir::Attribute& b) {
  using Kind = ir::Attribute::Kind;
  if (a.kind != b.kind) return false;
  switch (a.kind) {
    case Kind::kInt: return a.i == b.i;
    case Kind::kFloat: return floats_equal({a.f}, {b.f});
    case Kind::kString: return a.s == b.s;
    case Kind::kTensor: return tensors_equal(a.t, b.t);
    case Kind::kInts: return a.ints == b.ints;
    case Kind::kFloats: return floats_equal(a.floats, b.floats);
    case Kind::kStrings: return a.strings == b.strings;
    case Kind::kTensors: return tensor_lists_equal(a.tensors, b.tensors);
    case Kind::kType: return a.type && b.type && *a.type == *b.type;
    case Kind::kGraph:
    case Kind::kGraphs: return false;
  }
  return false;
}

// Same computation: op, domain, opset, inputs, attributes, and which outputs are present.
bool nodes_equal(const ir::Node& a, const ir::Node& b) {
  if (a.op_type != b.op_type || a.domain != b.domain || a.opset_version != b.opset_version ||
      a.inputs != b.inputs || a.outputs.size() != b.outputs.size() || a.attributes.size() != b.attributes.size())
    return false;
  for (size_t i = 0; i < a.outputs.size(); ++i)
    if (!a.outputs[i] != !b.outputs[i]) return false;
  return std::equal(a.attributes.begin(), a.attributes.end(), b.attributes.begin(), [](const auto& x, const auto& y) {
    return x.first == y.first && attributes_equal(x.second, y.second);
  });
}

// Hash of an attribute's scalar contents; tensors and lists of floats or strings are left to
// attributes_equal.
size_t attribute_hash(const ir::Attribute& a) {
  size_t h = std::hash<int>()(static_cast<int>(a.kind));
  hash_combine(h, std::hash<int64_t>()(a.i));
  hash_combine(h, std::hash<uint32_t>()(std::bit_cast<uint32_t>(a.f)));
  hash_combine(h, std::hash<std::string>()(a.s));
  for (int64_t v : a.ints) hash_combine(h, std::hash<int64_t>()(v));
  return h;
}

// Hash of what nodes_equal compares.
size_t node_hash(const ir::Node& node) {
  size_t h = std::hash<std::string>()(node.op_type);
  hash_combine(h, std::hash<std::string>()(node.domain));
  hash_combine(h, std::hash<int>()(node.opset_version));
  for (const ir::Value* in : node.inputs) hash_combine(h, std::hash<const void*>()(in));
  for (const auto& [key, attr] : node.attributes) {
    hash_combine(h, std::hash<std::string>()(key));
    hash_combine(h, attribute_hash(attr));
  }
  return h;
}

// What may be replaced by an equal value: not a graph input or output, not captured by name.
struct Replaceable {
  const ir::Graph& graph;
  std::set<std::string> captured;

  bool operator()(const ir::Value* v) const {
    return !v || (!graph.is_graph_input(v) && !graph.is_graph_output(v) && !captured.count(v->name));
  }
};

bool merge_nodes(ir::Graph& graph, const Replaceable& replaceable) {
  std::unordered_map<size_t, std::vector<const ir::Node*>> seen;
  std::vector<const ir::Node*> order;
  for (const auto& node : graph.nodes()) order.push_back(node.get());
  bool changed = false;
  for (const ir::Node* node : order) {
    if (node->has_subgraph() || ops::is_nondeterministic(*node) || node->outputs.empty()) continue;
    auto& bucket = seen[node_hash(*node)];
    auto kept = std::find_if(bucket.begin(), bucket.end(), [&](const ir::Node* k) { return nodes_equal(*k, *node); });
    if (kept == bucket.end() || !std::all_of(node->outputs.begin(), node->outputs.end(), replaceable)) {
      bucket.push_back(node);
      continue;
    }
    for (size_t i = 0; i < node->outputs.size(); ++i)
      if (node->outputs[i]) graph.replace_all_uses(node->outputs[i], (*kept)->outputs[i]);
    graph.remove_node(node);
    changed = true;
  }
  return changed;
}

bool merge_constants(ir::Graph& graph, const Replaceable& replaceable) {
  std::unordered_map<const ir::Value*, bool> read;
  for (const auto& node : graph.nodes())
    for (const ir::Value* in : node->inputs) read[in] = true;
  // Constants that could be merged, grouped by (dtype, shape).
  std::map<std::pair<DType, std::vector<int64_t>>, std::vector<ir::Value*>> groups;
  for (const auto& v : graph.values()) {
    if (!v->is_constant() || graph.is_graph_input(v.get())) continue;
    groups[{v->initializer->dtype(), v->initializer->shape()}].push_back(v.get());
  }
  bool changed = false;
  for (auto& [key, group] : groups) {
    if (group.size() < 2) continue;
    std::unordered_map<size_t, std::vector<ir::Value*>> by_hash;
    for (ir::Value* v : group) {
      auto& bucket = by_hash[tensor_hash(*v->initializer)];
      auto kept = std::find_if(bucket.begin(), bucket.end(),
                               [&](const ir::Value* k) { return tensors_equal(*k->initializer, *v->initializer); });
      if (kept == bucket.end() || !read[v] || !replaceable(v)) {
        bucket.push_back(v);
        continue;
      }
      graph.replace_all_uses(v, *kept);
      changed = true;
    }
  }
  return changed;
}

}  // namespace

Result<bool> eliminate_common_subexpressions(ir::Graph& graph, const PassContext& ctx) {
  const Replaceable replaceable{graph, names_captured_by_subgraphs(graph)};
  const bool constants_merged = merge_constants(graph, replaceable);
  const bool nodes_merged = merge_nodes(graph, replaceable);
  return constants_merged || nodes_merged;
}

}  // namespace kiln::passes
