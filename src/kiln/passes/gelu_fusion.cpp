// gelu_fusion: pattern matching from each Erf or Tanh outwards.
#include "kiln/passes/gelu_fusion.h"

#include <cmath>
#include <numbers>

#include "kiln/passes/rewrite_helpers.h"

namespace kiln::passes {
namespace {

// A constant scalar (any float dtype, one element) close to `want`.
bool is_scalar(const ir::Value* v, double want) {
  if (!v || !v->initializer || v->initializer->element_count() != 1) return false;
  const double got = element_as_double(*v->initializer, 0);
  return std::fabs(got - want) <= 1e-4 * std::max(1.0, std::fabs(want));
}

// For a two-input node, the input that is not `v` (nullptr when v is not an input).
ir::Value* other_input(const ir::Node& n, const ir::Value* v) {
  if (n.inputs.size() != 2) return nullptr;
  if (n.inputs[0] == v) return n.inputs[1];
  if (n.inputs[1] == v) return n.inputs[0];
  return nullptr;
}

// The one node reading v, when it is the ai.onnx op `op`.
ir::Node* single_reader(const ir::Graph& g, const ir::Value* v, const char* op) {
  const std::vector<ir::Node*> readers = g.consumers(v);
  return readers.size() == 1 && is_onnx_op(*readers[0], op) ? readers[0] : nullptr;
}

// x * 0.5 (either order): returns x, else nullptr.
ir::Value* halved(const ir::Value* v) {
  const ir::Node* m = v ? v->producer : nullptr;
  if (!m || !is_onnx_op(*m, "Mul") || m->inputs.size() != 2) return nullptr;
  if (is_scalar(m->inputs[1], 0.5)) return m->inputs[0];
  if (is_scalar(m->inputs[0], 0.5)) return m->inputs[1];
  return nullptr;
}

// From `one_plus` = f(x) + 1, finds the node computing 0.5 * x * one_plus (in either order).
const ir::Node* gelu_output_node(const ir::Graph& g, const ir::Value* one_plus, const ir::Value* x) {
  const ir::Node* mul = single_reader(g, one_plus, "Mul");
  if (!mul) return nullptr;
  const ir::Value* factor = other_input(*mul, one_plus);
  if (halved(factor) == x) return mul;  // (0.5 x) * (f + 1)
  if (factor != x) return nullptr;
  const ir::Node* half = single_reader(g, mul->outputs[0], "Mul");  // (x * (f + 1)) * 0.5
  return half && is_scalar(other_input(*half, mul->outputs[0]), 0.5) ? half : nullptr;
}

// f + 1 from the output of Erf or Tanh.
const ir::Value* plus_one(const ir::Graph& g, const ir::Value* f) {
  const ir::Node* add = single_reader(g, f, "Add");
  return add && is_scalar(other_input(*add, f), 1.0) ? add->outputs[0] : nullptr;
}

// Erf's input as x / sqrt 2 or x * (1 / sqrt 2): returns x.
ir::Value* erf_argument(const ir::Node& erf) {
  const ir::Node* p = erf.inputs[0] ? erf.inputs[0]->producer : nullptr;
  if (!p || p->inputs.size() != 2) return nullptr;
  if (is_onnx_op(*p, "Div") && is_scalar(p->inputs[1], std::numbers::sqrt2)) return p->inputs[0];
  if (is_onnx_op(*p, "Mul") && is_scalar(p->inputs[1], 1.0 / std::numbers::sqrt2)) return p->inputs[0];
  if (is_onnx_op(*p, "Mul") && is_scalar(p->inputs[0], 1.0 / std::numbers::sqrt2)) return p->inputs[1];
  return nullptr;
}

// The operand of a Mul by scalar `c` (either order).
ir::Value* scaled_by(const ir::Value* v, double c) {
  const ir::Node* m = v ? v->producer : nullptr;
  if (!m || !is_onnx_op(*m, "Mul") || m->inputs.size() != 2) return nullptr;
  if (is_scalar(m->inputs[1], c)) return m->inputs[0];
  if (is_scalar(m->inputs[0], c)) return m->inputs[1];
  return nullptr;
}

// Tanh's input as sqrt(2/pi) * (x + 0.044715 * x^3): returns x.
ir::Value* tanh_argument(const ir::Node& tanh) {
  const ir::Value* inner = scaled_by(tanh.inputs[0], std::sqrt(2.0 / std::numbers::pi));
  const ir::Node* add = inner ? inner->producer : nullptr;
  if (!add || !is_onnx_op(*add, "Add") || add->inputs.size() != 2) return nullptr;
  for (size_t i = 0; i < 2; ++i) {
    ir::Value* x = add->inputs[i];
    const ir::Value* cube = scaled_by(add->inputs[1 - i], 0.044715);
    const ir::Node* pow = cube ? cube->producer : nullptr;
    if (pow && is_onnx_op(*pow, "Pow") && pow->inputs[0] == x && is_scalar(pow->input(1), 3.0)) return x;
  }
  return nullptr;
}

// Replaces the node writing y by kiln.Gelu(x).
void replace_with_gelu(ir::Graph& g, const ir::Node& last, ir::Value* x, const ir::Node& core, const char* approximate) {
  ir::Value* y = last.outputs[0];
  const std::vector<std::string> origins = {core.name, last.name};
  g.remove_node(&last);
  ir::Node* gelu = g.add_node("Gelu", {x}, {y}, g.unique_name(core.name + "_gelu"), "kiln", 1);
  gelu->attributes["approximate"] = ir::Attribute::of_string(approximate);
  gelu->origins = origins;
}

}  // namespace

Result<bool> fuse_gelu(ir::Graph& graph, const PassContext&) {
  const std::set<std::string> captured = names_captured_by_subgraphs(graph);
  bool changed = false;
  std::vector<const ir::Node*> cores;
  for (const auto& n : graph.nodes())
    if (is_onnx_op(*n, "Erf") || is_onnx_op(*n, "Tanh")) cores.push_back(n.get());
  for (const ir::Node* core : cores) {
    const bool erf = core->op_type == "Erf";
    ir::Value* x = erf ? erf_argument(*core) : tanh_argument(*core);
    const ir::Value* one_plus = x ? plus_one(graph, core->outputs[0]) : nullptr;
    const ir::Node* last = one_plus ? gelu_output_node(graph, one_plus, x) : nullptr;
    if (!last || captured.count(last->outputs[0]->name)) continue;
    replace_with_gelu(graph, *last, x, *core, erf ? "none" : "tanh");
    changed = true;
  }
  if (changed) KILN_RETURN_IF_ERROR(graph.topological_sort());
  return changed;
}

}  // namespace kiln::passes
