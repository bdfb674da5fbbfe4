// conv_fusion: Conv [+ Add residual] [+ activation] -> kiln.FusedConv.
#include "kiln/passes/conv_fusion.h"

#include "kiln/ops/activation.h"
#include "kiln/passes/rewrite_helpers.h"

namespace kiln::passes {
namespace {

constexpr size_t kResidualInput = 3;

bool is_conv(const ir::Node& n) { return is_onnx_op(n, "Conv") || (n.domain == "kiln" && n.op_type == "FusedConv"); }
bool has_residual(const ir::Node& n) { return n.input(kResidualInput) != nullptr; }
bool has_activation(const ir::Node& n) { return n.has_attr("activation"); }

// The single node reading the conv's output, when nothing else (graph output, subgraph) needs it.
ir::Node* sole_consumer(const ir::Graph& graph, const ir::Node& conv, const std::set<std::string>& captured) {
  const ir::Value* y = conv.outputs.empty() ? nullptr : conv.outputs[0];
  if (!y || graph.is_graph_output(y) || captured.count(y->name)) return nullptr;
  const std::vector<ir::Node*> readers = graph.consumers(y);
  return readers.size() == 1 ? readers[0] : nullptr;
}

// The Add's other operand when it is a residual of exactly the conv output's type.
ir::Value* residual_operand(const ir::Node& add, const ir::Value* y) {
  if (!is_onnx_op(add, "Add") || add.inputs.size() != 2 || add.inputs[0] == add.inputs[1]) return nullptr;
  ir::Value* other = add.inputs[0] == y ? add.inputs[1] : add.inputs[0];
  const ir::TensorType& t = y->type;
  const bool same = other && t.has_static_shape() && other->type == t;
  return same ? other : nullptr;
}

// Makes `conv` a kiln.FusedConv that writes `consumer`'s output, and removes `consumer`.
void absorb(ir::Graph& graph, ir::Node& conv, const ir::Node& consumer) {
  if (conv.domain != "kiln") {
    conv.origins = conv.source_nodes();
    conv.op_type = "FusedConv";
    conv.domain = "kiln";
    conv.opset_version = 1;
  }
  for (const std::string& name : consumer.source_nodes()) conv.origins.push_back(name);
  ir::Value* out = consumer.outputs[0];
  graph.remove_node(&consumer);
  conv.outputs[0] = out;
  out->producer = &conv;
}

// Folds the conv's sole consumer into it when that is a residual Add or an activation.
bool fuse_next(ir::Graph& graph, ir::Node& conv, const std::set<std::string>& captured) {
  ir::Node* next = sole_consumer(graph, conv, captured);
  if (!next || has_activation(conv)) return false;
  if (ir::Value* residual = has_residual(conv) ? nullptr : residual_operand(*next, conv.outputs[0])) {
    absorb(graph, conv, *next);
    conv.inputs.resize(kResidualInput + 1, nullptr);
    conv.inputs[kResidualInput] = residual;
    return true;
  }
  if (const std::optional<ops::Activation> activation = ops::activation_of(*next)) {
    absorb(graph, conv, *next);
    ops::set_fused_activation(conv, *activation);
    return true;
  }
  return false;
}

}  // namespace

Result<bool> fuse_convolutions(ir::Graph& graph, const PassContext&) {
  const std::set<std::string> captured = names_captured_by_subgraphs(graph);
  bool changed = false;
  std::vector<ir::Node*> convs;
  for (const auto& n : graph.nodes())
    if (is_conv(*n)) convs.push_back(n.get());
  for (ir::Node* conv : convs)
    while (fuse_next(graph, *conv, captured)) changed = true;
  if (changed) {
    KILN_RETURN_IF_ERROR(graph.topological_sort());
    graph.remove_unused_values();
  }
  return changed;
}

}  // namespace kiln::passes
