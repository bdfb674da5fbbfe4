// batchnorm_folding: Conv + BatchNormalization -> Conv with rescaled weights and a new bias.
#include "kiln/passes/batchnorm_folding.h"

#include <cmath>

#include "kiln/passes/rewrite_helpers.h"

namespace kiln::passes {
namespace {

const Tensor* float_constant(const ir::Value* v, int64_t elements) {
  if (!v || !v->initializer || v->initializer->dtype() != DType::kFloat || v->initializer->element_count() != elements)
    return nullptr;
  return &*v->initializer;
}

// The norm reading `conv`'s output, when it can be folded.
const ir::Node* foldable_norm(const ir::Graph& graph, const ir::Node& conv, const std::set<std::string>& captured) {
  const ir::Value* y = conv.outputs[0];
  const std::vector<ir::Node*> readers = graph.consumers(y);
  if (readers.size() != 1 || graph.is_graph_output(y) || captured.count(y->name)) return nullptr;
  const ir::Node& bn = *readers[0];
  if (!is_onnx_op(bn, "BatchNormalization") || bn.inputs.size() != 5 || bn.inputs[0] != y) return nullptr;
  for (size_t i = 1; i < bn.outputs.size(); ++i)
    if (bn.outputs[i]) return nullptr;  // training mode: running statistics are outputs
  if (bn.opset_version < 7 && bn.attr_int("spatial", 1) != 1) return nullptr;
  if (bn.opset_version >= 14 && bn.attr_int("training_mode", 0) != 0) return nullptr;
  return &bn;
}

// Folds `bn` into `conv`; false when an operand is not a float constant of the right size.
bool fold(ir::Graph& graph, ir::Node& conv, const ir::Node& bn) {
  const ir::Value* weights = conv.input(1);
  const Tensor* w = weights && weights->initializer ? float_constant(weights, weights->initializer->element_count()) : nullptr;
  if (!w || w->rank() < 3 || w->shape()[0] == 0) return false;
  const int64_t m = w->shape()[0], per_channel = w->element_count() / m;
  const Tensor* bias = conv.input(2) ? float_constant(conv.input(2), m) : nullptr;
  if (conv.input(2) && !bias) return false;
  const Tensor *gamma = float_constant(bn.inputs[1], m), *beta = float_constant(bn.inputs[2], m),
               *mean = float_constant(bn.inputs[3], m), *var = float_constant(bn.inputs[4], m);
  if (!gamma || !beta || !mean || !var) return false;
  const double eps = bn.attr_float("epsilon", 1e-5f);
  Tensor new_w = Tensor::allocate(DType::kFloat, w->shape());
  Tensor new_b = Tensor::allocate(DType::kFloat, {m});
  for (int64_t c = 0; c < m; ++c) {
    const double s = gamma->data<float>()[c] / std::sqrt(static_cast<double>(var->data<float>()[c]) + eps);
    for (int64_t k = 0; k < per_channel; ++k)
      new_w.data<float>()[c * per_channel + k] = static_cast<float>(w->data<float>()[c * per_channel + k] * s);
    const double b = bias ? bias->data<float>()[c] : 0.0;
    new_b.data<float>()[c] = static_cast<float>((b - mean->data<float>()[c]) * s + beta->data<float>()[c]);
  }
  conv.inputs[1] = graph.add_constant(graph.unique_name(conv.input(1)->name + "_bn_folded"), std::move(new_w));
  conv.inputs.resize(3, nullptr);
  conv.inputs[2] = graph.add_constant(graph.unique_name(conv.name + "_bn_bias"), std::move(new_b));
  conv.origins = conv.source_nodes();
  conv.origins.push_back(bn.name);
  ir::Value* out = bn.outputs[0];
  graph.remove_node(&bn);
  conv.outputs[0] = out;
  out->producer = &conv;
  return true;
}

}  // namespace

Result<bool> fold_batchnorms(ir::Graph& graph, const PassContext&) {
  const std::set<std::string> captured = names_captured_by_subgraphs(graph);
  std::vector<ir::Node*> convs;
  for (const auto& n : graph.nodes())
    if (is_onnx_op(*n, "Conv") && n->outputs.size() == 1 && n->outputs[0]) convs.push_back(n.get());
  bool changed = false;
  for (ir::Node* conv : convs)
    if (const ir::Node* bn = foldable_norm(graph, *conv, captured)) changed = fold(graph, *conv, *bn) || changed;
  if (changed) graph.remove_unused_values();
  return changed;
}

}  // namespace kiln::passes
