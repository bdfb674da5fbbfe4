// legacy_forms: the opset 1-8 forms of element-wise ops and BatchNormalization as current versions.
#include "kiln/passes/legacy_forms.h"

#include <optional>
#include <set>

#include "kiln/passes/rewrite_helpers.h"

namespace kiln::passes {
namespace {

const std::set<std::string> kBroadcastAttributeOps = {"Add", "Sub", "Mul", "Div", "Pow", "And", "Or", "Xor", "Equal", "Greater", "Less"};
const std::set<std::string> kVariadicOps = {"Sum", "Max", "Min", "Mean"};

// The dims `b` takes for numpy broadcasting to align it with a rank-`rank` tensor at `axis`: its
// own, then 1s to the end. nullopt when b's dims are unknown or do not fit.
std::optional<std::vector<int64_t>> aligned_dims(const ir::Value* b, int64_t rank, int64_t axis) {
  if (!b->type.is_tensor() || !b->type.has_static_shape()) return std::nullopt;
  std::vector<int64_t> dims = b->type.shape->static_dims();
  if (shape_element_count(dims) == 1) return std::vector<int64_t>{};  // a scalar broadcasts anywhere
  if (axis < 0) axis += rank;
  const auto own = static_cast<int64_t>(dims.size());
  if (axis < 0 || axis + own > rank) return std::nullopt;
  dims.resize(static_cast<size_t>(rank - axis), 1);
  return dims;
}

// Makes node input `i` read its value reshaped to `dims`: a reshaped copy of a constant, else a
// Reshape node before the node.
void reshape_input(ir::Graph& graph, ir::Node& node, size_t i, const std::vector<int64_t>& dims) {
  ir::Value* v = node.inputs[i];
  if (v->type.shape && v->type.shape->static_dims() == dims) return;
  const std::string name = graph.unique_name(v->name + "_aligned");
  if (v->is_constant()) {
    node.inputs[i] = graph.add_constant(name, v->initializer->reshaped(dims));
    return;
  }
  ir::Value* shape = graph.add_constant(graph.unique_name(name + "_shape"),
                                        Tensor::from_vector<int64_t>(DType::kInt64, {static_cast<int64_t>(dims.size())}, dims));
  ir::Value* aligned = graph.add_value(name, ir::make_type(v->type.dtype, dims));
  ir::Node* reshape = graph.add_node("Reshape", {v, shape}, {aligned}, name, "", 14);
  reshape->origins = node.source_nodes();
  node.inputs[i] = aligned;
}

void become_version(ir::Node& node, int version) {
  node.opset_version = version;
  for (const char* legacy : {"broadcast", "axis", "consumed_inputs", "is_test", "spatial"}) node.attributes.erase(legacy);
}

// Rewrites one node; false when it is not a legacy form this pass can rewrite.
bool modernise(ir::Graph& graph, ir::Node& node) {
  if (!node.domain.empty()) return false;
  if (kBroadcastAttributeOps.count(node.op_type) && node.opset_version < 7 && node.inputs.size() == 2) {
    const ir::Value* a = node.input(0);
    if (node.attr_int("broadcast", 0) != 0) {
      if (!a || !node.input(1) || !a->type.shape) return false;
      const auto rank = static_cast<int64_t>(a->type.shape->rank());
      const int64_t b_rank = node.input(1)->type.shape ? static_cast<int64_t>(node.input(1)->type.shape->rank()) : 0;
      const std::optional<std::vector<int64_t>> dims = aligned_dims(node.input(1), rank, node.attr_int("axis", rank - b_rank));
      if (!dims) return false;
      reshape_input(graph, node, 1, *dims);
    }
    become_version(node, 7);
    return true;
  }
  if (node.op_type == "PRelu" && node.opset_version < 7 && node.inputs.size() == 2) {
    const ir::Value* x = node.input(0);
    const ir::Value* slope = node.input(1);
    if (!x || !slope || !x->type.shape || !slope->type.shape) return false;
    const auto rank = static_cast<int64_t>(x->type.shape->rank());
    if (slope->type.shape->rank() == 1 && rank >= 2) {
      const std::optional<std::vector<int64_t>> dims = aligned_dims(slope, rank, 1);
      if (!dims) return false;
      reshape_input(graph, node, 1, *dims);
    }
    become_version(node, 7);
    return true;
  }
  if (kVariadicOps.count(node.op_type) && node.opset_version < 8) {
    become_version(node, 8);
    return true;
  }
  if (node.op_type == "BatchNormalization" && node.opset_version < 9 && node.attr_int("spatial", 1) == 1 &&
      (node.opset_version >= 7 || node.attr_int("is_test", 0) != 0)) {
    become_version(node, 9);
    return true;
  }
  return false;
}

}  // namespace

Result<bool> modernise_legacy_forms(ir::Graph& graph, const PassContext&) {
  std::vector<ir::Node*> nodes;
  for (const auto& node : graph.nodes()) nodes.push_back(node.get());
  bool changed = false;
  for (ir::Node* node : nodes) changed = modernise(graph, *node) || changed;
  return finish_rewrite(graph, changed);
}

}  // namespace kiln::passes
