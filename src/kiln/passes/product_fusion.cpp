// product_fusion: Conv | MatMul | plain Gemm [+ bias] [+ Add residual] [+ activation] -> kiln.FusedConv |
// FusedMatMul.
#include "kiln/ops/fused_product_inputs.h"
#include "kiln/passes/product_fusion.h"

#include <algorithm>

#include "kiln/ops/activation.h"
#include "kiln/passes/rewrite_helpers.h"

namespace kiln::passes {
namespace {

bool is_kiln_op(const ir::Node& n, const char* op) { return n.domain == "kiln" && n.op_type == op; }
bool is_conv(const ir::Node& n) { return is_onnx_op(n, "Conv") || is_kiln_op(n, "FusedConv"); }
bool is_matmul(const ir::Node& n) { return is_onnx_op(n, "MatMul") || is_kiln_op(n, "FusedMatMul"); }
bool has_bias(const ir::Node& n) { return n.input(ops::kFusedBiasInput) != nullptr; }
bool has_residual(const ir::Node& n) { return n.input(ops::kFusedResidualInput) != nullptr; }
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

// A Gemm that is a plain product plus an optional bias (alpha = beta = 1, A not transposed, B a 2-D
// float constant, C absent or one constant row of N values) becomes kiln.FusedMatMul(A, B, bias),
// B transposed once when transB says so: its Relu or residual can then be folded in like a
// MatMul's (the wake-word heads' Gemm -> Relu pairs).
bool gemm_as_product(ir::Graph& graph, ir::Node& gemm) {
  if (!is_onnx_op(gemm, "Gemm") || gemm.opset_version < 9 || gemm.attr_float("alpha", 1.0f) != 1.0f ||
      gemm.attr_int("transA", 0) != 0 || (gemm.input(2) && gemm.attr_float("beta", 1.0f) != 1.0f))
    return false;
  const ir::Value* a = gemm.input(0);
  const ir::Value* b = gemm.input(1);
  const ir::Value* c = gemm.input(2);
  if (!a || !b || !b->initializer || b->initializer->rank() != 2 || b->type.dtype != DType::kFloat || a->type.dtype != DType::kFloat)
    return false;
  const bool transposed = gemm.attr_int("transB", 0) != 0;
  const Tensor& given = *b->initializer;
  const int64_t n = transposed ? given.shape()[0] : given.shape()[1], k = transposed ? given.shape()[1] : given.shape()[0];
  if (c && (!c->initializer || c->type.dtype != DType::kFloat || c->initializer->element_count() != n ||
            (c->initializer->rank() == 2 && c->initializer->shape()[0] != 1) || c->initializer->rank() > 2))
    return false;
  ir::Value* weights = gemm.inputs[1];
  if (transposed) {
    Tensor t = Tensor::allocate(DType::kFloat, {k, n});
    for (int64_t i = 0; i < k; ++i)
      for (int64_t j = 0; j < n; ++j) t.data<float>()[i * n + j] = given.data<float>()[j * k + i];
    weights = graph.add_constant(graph.unique_name(b->name + "_t"), std::move(t));
  }
  ir::Value* bias = nullptr;
  if (c) bias = c->initializer->rank() == 1 ? gemm.inputs[2] : graph.add_constant(graph.unique_name(c->name + "_row"), c->initializer->reshaped({n}));
  gemm.origins = gemm.source_nodes();
  gemm.op_type = "FusedMatMul";
  gemm.domain = "kiln";
  gemm.opset_version = 1;
  gemm.attributes.clear();
  gemm.inputs = {gemm.inputs[0], weights, bias};
  return true;
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
    product.inputs.resize(ops::kFusedBiasInput + 1, nullptr);
    product.inputs[ops::kFusedBiasInput] = bias;
    return true;
  }
  if (ir::Value* residual = has_residual(product) ? nullptr : residual_operand(*next, product.outputs[0])) {
    absorb(graph, product, *next);
    product.inputs.resize(ops::kFusedResidualInput + 1, nullptr);  // bias stays omitted when absent
    product.inputs[ops::kFusedResidualInput] = residual;
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
  for (const auto& n : graph.nodes()) {
    if (gemm_as_product(graph, *n)) changed = true;
    if (is_conv(*n) || is_matmul(*n)) products.push_back(n.get());
  }
  for (ir::Node* product : products)
    while (fuse_next(graph, *product, captured)) changed = true;
  return finish_rewrite(graph, changed);
}

}  // namespace kiln::passes
