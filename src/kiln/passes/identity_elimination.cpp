// Identity elimination: Identity, Dropout that passes its input through at inference, and Casts and
// reshapes that change nothing (as analysed).
#include "kiln/passes/identity_elimination.h"

#include <algorithm>
#include <set>

#include "kiln/passes/rewrite_helpers.h"

namespace kiln::passes {

namespace {

bool is_constant_false(const ir::Value* v) {
  if (!v || !v->is_constant() || v->initializer->dtype() != DType::kBool || v->initializer->element_count() != 1)
    return false;
  return !v->initializer->data<bool>()[0];
}

// The constant scalar `v` is zero (a float ratio).
bool is_constant_zero(const ir::Value* v) {
  if (!v || !v->is_constant() || v->initializer->element_count() != 1) return false;
  const Tensor& t = *v->initializer;
  if (t.dtype() == DType::kFloat) return t.data<float>()[0] == 0.0f;
  if (t.dtype() == DType::kDouble) return t.data<double>()[0] == 0.0;
  return false;
}

// Dropout is the identity when not training, or when it drops nothing (ratio 0: torch's
// F.dropout(x, p=0.0) exports training_mode true): training_mode is an input since opset 12
// (absent means false); before opset 7 the is_test attribute must say so; opsets 7-11 have no
// training mode. Its mask output must be unread.
bool is_inference_dropout(const ir::Graph& graph, const ir::Node& node, const std::set<std::string>& captured) {
  if (!is_onnx_op(node, "Dropout")) return false;
  const ir::Value* mask = node.outputs.size() > 1 ? node.outputs[1] : nullptr;
  if (mask && (!graph.consumers(mask).empty() || graph.is_graph_output(mask) || captured.count(mask->name)))
    return false;
  if (node.opset_version >= 12) return !node.input(2) || is_constant_false(node.input(2)) || is_constant_zero(node.input(1));
  return node.opset_version >= 7 || node.attr_int("is_test", 0) != 0 || node.attr_float("ratio", 0.5f) == 0.0f;
}

// Both values are tensors of the same dtype and the same fully known shape.
bool same_static_type(const ir::Value* a, const ir::Value* b) {
  if (!a || !b || !a->type.has_static_shape() || !b->type.has_static_shape() || a->type.dtype != b->type.dtype) return false;
  return a->type.shape->static_dims() == b->type.shape->static_dims();
}

// A Cast to the type its input has, or a Reshape, Expand, Squeeze, Unsqueeze or Flatten whose
// output has its input's shape (as analysed): a copy at most.
bool is_no_op(const ir::Node& node) {
  if (!node.domain.empty() || node.outputs.empty()) return false;
  const ir::Value* in = node.input(0);
  const ir::Value* out = node.outputs[0];
  if (node.op_type == "Cast" || node.op_type == "CastLike")
    return in && in->type.is_tensor() && in->type.dtype != DType::kUndefined && same_static_type(in, out);
  static const std::set<std::string> reshapes = {"Reshape", "Expand", "Squeeze", "Unsqueeze", "Flatten"};
  return reshapes.count(node.op_type) && same_static_type(in, out);
}

// True when `v` is read only by `node` (no other node, subgraph or graph output).
bool read_only_by(const ir::Graph& graph, const ir::Value* v, const ir::Node& node,
                  const std::set<std::string>& captured) {
  const std::vector<ir::Node*> readers = graph.consumers(v);
  return readers.size() == 1 && readers[0] == &node && !graph.is_graph_output(v) && !captured.count(v->name) &&
         std::count(node.inputs.begin(), node.inputs.end(), v) == 1;
}

// Removes one pass-through node whose output is `out` and input `in`; false when it must stay.
bool bypass(ir::Graph& graph, const ir::Node& node, ir::Value* in, ir::Value* out,
            const std::set<std::string>& captured) {
  if (!in || !out || captured.count(out->name)) return false;
  if (!graph.is_graph_output(out)) {
    graph.replace_all_uses(out, in);
    graph.remove_node(&node);
    return true;
  }
  // `out` names a graph output: let in's producer write `out` directly.
  ir::Node* producer = in->producer;
  if (!producer || graph.is_graph_input(in) || !read_only_by(graph, in, node, captured)) return false;
  graph.remove_node(&node);
  std::replace(producer->outputs.begin(), producer->outputs.end(), in, out);
  out->producer = producer;
  in->producer = nullptr;
  return true;
}

}  // namespace

Result<bool> eliminate_identities(ir::Graph& graph, const PassContext& ctx) {
  const std::set<std::string> captured = names_captured_by_subgraphs(graph);
  std::vector<ir::Node*> candidates;
  for (const auto& node : graph.nodes())
    if (is_onnx_op(*node, "Identity") || is_inference_dropout(graph, *node, captured) || is_no_op(*node))
      candidates.push_back(node.get());
  bool changed = false;
  for (ir::Node* node : candidates) {
    ir::Value* out = node->outputs.empty() ? nullptr : node->outputs[0];
    changed = bypass(graph, *node, node->input(0), out, captured) || changed;
  }
  return changed;
}

}  // namespace kiln::passes
