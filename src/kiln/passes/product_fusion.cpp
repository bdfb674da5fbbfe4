// product_fusion: Conv | MatMul [+ bias] [+ Add residual] [+ activation] -> kiln.FusedConv | FusedMatMul.
#include "kiln/passes/product_fusion.h"

#include <algorithm>

#include "kiln/ops/activation.h"
#include "kiln/passes/rewrite_helpers.h"

namespace kiln::passes {
namespace {

// Both fused ops take (X or A, W or B, bias, residual).
constexpr size_t kBiasInput = 2, kResidualInput = 3;

bool is_kiln_op(const ir::Node& n, const char* op) { return n.domain == "kiln" && n.op_type == op; }
bool is_conv(const ir::Node& n) { return is_onnx_op(n, "Conv") || is_kiln_op(n, "FusedConv"); }
bool is_matmul(const ir::Node& n) { return is_onnx_op(n, "MatMul") || is_kiln_op(n, "FusedMatMul"); }
bool has_bias(const ir::Node& n) { return n.input(kBiasInput) != nullptr; }
bool has_residual(const ir::Node& n) { return n.input(kResidualInput) != nullptr; }
bool has_activation(const ir::Node& n) { return n.has_attr("activation"); }

// The single node reading the product's output, when nothing else (graph output, subgraph) needs it.
ir::Node* sole_consumer(const ir::Graph& graph, const ir::Node& product, const std::set<std::string>& captured) {
  const ir::Value* y = product.outputs.empty() ? nullptr : product.outputs[0];
  if (!y || graph.is_graph_output(y) || captured.count(y->name)) return nullptr;
  const std::vector<ir::Node*> readers = graph.consumers(y);
  return readers.size() == 1 ? readers[0] : nullptr;
}

// The Add's other operand when it is a residual of exactly the product output's type.
ir::Value* residual_operand(const ir::Node& add, const ir::Value* y) {
  if (!is_onnx_op(add, "Add") || add.inputs.size() != 2 || add.inputs[0] == add.inputs[1]) return nullptr;
  ir::Value* other = add.inputs[0] == y ? add.inputs[1] : add.inputs[0];
  const ir::TensorType& t = y->type;
  // Equal types with every dim known or named: a named symbol is one size, an unknown dim is not.
  const bool known = t.shape && std::all_of(t.shape->dims().begin(), t.shape->dims().end(),
                                            [](const ir::Dim& d) { return d.is_static() || d.is_symbol(); });
  const bool same = other && known && other->type == t;
  return same ? other : nullptr;
}

// A MatMul's bias: an Add of a constant 1-D tensor as long as the output's last dim.
ir::Value* bias_operand(const ir::Node& add, const ir::Value* y) {
  if (!is_onnx_op(add, "Add") || add.inputs.size() != 2) return nullptr;
  ir::Value* other = add.inputs[0] == y ? add.inputs[1] : add.inputs[0];
  const bool fits = other && other->initializer && other->initializer->rank() == 1 && y->type.shape && y->type.shape->rank() >= 1 &&
                    (*y->type.shape)[y->type.shape->rank() - 1] == ir::Dim(other->initializer->shape()[0]) &&
                    other->type.dtype == y->type.dtype;
  return fits ? other : nullptr;
}

// Makes `product` a fused node that writes `consumer`'s output, and removes `consumer`.
void absorb(ir::Graph& graph, ir::Node& product, const ir::Node& consumer) {
  if (product.domain != "kiln") {
    product.origins = product.source_nodes();
    product.op_type = is_conv(product) ? "FusedConv" : "FusedMatMul";
    product.domain = "kiln";
    product.opset_version = 1;
  }
  for (const std::string& name : consumer.source_nodes()) product.origins.push_back(name);
  ir::Value* out = consumer.outputs[0];
  graph.remove_node(&consumer);
  product.outputs[0] = out;
  out->producer = &product;
}

// Folds the product's sole consumer into it when that is its bias (MatMul), a residual Add or an
// activation, in that order.
bool fuse_next(ir::Graph& graph, ir::Node& product, const std::set<std::string>& captured) {
  ir::Node* next = sole_consumer(graph, product, captured);
  if (!next || has_activation(product)) return false;
  const bool bias_allowed = is_matmul(product) && !has_bias(product) && !has_residual(product);
  if (ir::Value* bias = bias_allowed ? bias_operand(*next, product.outputs[0]) : nullptr) {
    absorb(graph, product, *next);
    product.inputs.resize(kBiasInput + 1, nullptr);
    product.inputs[kBiasInput] = bias;
    return true;
  }
  if (ir::Value* residual = has_residual(product) ? nullptr : residual_operand(*next, product.outputs[0])) {
    absorb(graph, product, *next);
    product.inputs.resize(kResidualInput + 1, nullptr);  // bias stays omitted when absent
    product.inputs[kResidualInput] = residual;
    return true;
  }
  if (const std::optional<ops::Activation> activation = ops::activation_of(*next)) {
    absorb(graph, product, *next);
    ops::set_fused_activation(product, *activation);
    return true;
  }
  return false;
}

}  // namespace

Result<bool> fuse_products(ir::Graph& graph, const PassContext&) {
  const std::set<std::string> captured = names_captured_by_subgraphs(graph);
  bool changed = false;
  std::vector<ir::Node*> products;
  for (const auto& n : graph.nodes())
    if (is_conv(*n) || is_matmul(*n)) products.push_back(n.get());
  for (ir::Node* product : products)
    while (fuse_next(graph, *product, captured)) changed = true;
  return finish_rewrite(graph, changed);
}

}  // namespace kiln::passes
