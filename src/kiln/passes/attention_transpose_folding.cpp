// attention_transpose_folding: Transpose -> kiln.Attention -> Transpose, as permutations.
#include "kiln/passes/attention_transpose_folding.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "kiln/ops/attention.h"
#include "kiln/ops/data_movement.h"
#include "kiln/passes/rewrite_helpers.h"

namespace kiln::passes {
namespace {

bool is_attention(const ir::Node& n) { return n.domain == "kiln" && n.op_type == "Attention"; }

// The Transpose's permutation when its input's rank is known.
std::optional<std::vector<int64_t>> permutation_of(const ir::Node& transpose) {
  const ir::Value* x = transpose.input(0);
  if (!is_onnx_op(transpose, "Transpose") || !x || !x->type.is_tensor() || !x->type.shape) return std::nullopt;
  Result<std::vector<int64_t>> perm = ops::transpose_perm(transpose, x->type.shape->rank());
  return perm.is_ok() ? std::optional(perm.value()) : std::nullopt;
}

// True when `v` is read by `reader` alone, once, and by nothing else (graph output, subgraph).
bool only_read_by(const ir::Graph& graph, const ir::Value* v, const ir::Node& reader, const std::set<std::string>& captured) {
  const std::vector<ir::Node*> readers = graph.consumers(v);
  return readers.size() == 1 && readers[0] == &reader && !graph.is_graph_output(v) && !captured.count(v->name) &&
         std::count(reader.inputs.begin(), reader.inputs.end(), v) == 1;
}

// The attention's permutation attribute `attr` for `rank` axes (identity when absent).
std::optional<std::vector<int64_t>> current_perm(const ir::Node& attention, const char* attr, size_t rank) {
  Result<std::vector<int64_t>> perm = ops::attention_perm(attention, attr, rank);
  return perm.is_ok() ? std::optional(perm.value()) : std::nullopt;
}

void add_origins(ir::Node& attention, const ir::Node& transpose) {
  if (attention.origins.empty()) attention.origins = attention.source_nodes();
  for (const std::string& name : transpose.source_nodes()) attention.origins.push_back(name);
}

// Folds the Transpose producing operand i; true when it did.
bool fold_operand(ir::Graph& graph, ir::Node& attention, size_t i, const std::set<std::string>& captured) {
  ir::Value* operand = attention.inputs[i];
  ir::Node* transpose = operand ? operand->producer : nullptr;
  if (!transpose || !only_read_by(graph, operand, attention, captured)) return false;
  const std::optional<std::vector<int64_t>> p = permutation_of(*transpose);
  const std::optional<std::vector<int64_t>> q = p ? current_perm(attention, ops::kAttentionOperandPerms[i], p->size()) : std::nullopt;
  if (!q) return false;
  // The operand T(T(x, p), q) reads x's dims p[q[i]].
  std::vector<int64_t> composed;
  for (int64_t axis : *q) composed.push_back((*p)[static_cast<size_t>(axis)]);
  attention.attributes[ops::kAttentionOperandPerms[i]] = ir::Attribute::of_ints(composed);
  add_origins(attention, *transpose);
  attention.inputs[i] = transpose->inputs[0];
  graph.remove_node(transpose);
  return true;
}

// Folds the Transpose reading the output; true when it did.
bool fold_output(ir::Graph& graph, ir::Node& attention, const std::set<std::string>& captured) {
  ir::Value* y = attention.outputs[0];
  const std::vector<ir::Node*> readers = graph.consumers(y);
  if (readers.size() != 1 || !only_read_by(graph, y, *readers[0], captured)) return false;
  ir::Node* transpose = readers[0];
  const std::optional<std::vector<int64_t>> p = permutation_of(*transpose);
  const std::optional<std::vector<int64_t>> q = p ? current_perm(attention, ops::kAttentionOutputPerm, p->size()) : std::nullopt;
  if (!q) return false;
  // The output T(T(Y, q), p) holds Y's dims q[p[i]].
  std::vector<int64_t> composed;
  for (int64_t axis : *p) composed.push_back((*q)[static_cast<size_t>(axis)]);
  attention.attributes[ops::kAttentionOutputPerm] = ir::Attribute::of_ints(composed);
  add_origins(attention, *transpose);
  ir::Value* out = transpose->outputs[0];
  graph.remove_node(transpose);
  attention.outputs[0] = out;
  out->producer = &attention;
  return true;
}

}  // namespace

Result<bool> fold_attention_transposes(ir::Graph& graph, const PassContext&) {
  const std::set<std::string> captured = names_captured_by_subgraphs(graph);
  std::vector<ir::Node*> attentions;
  for (const auto& n : graph.nodes())
    if (is_attention(*n)) attentions.push_back(n.get());
  bool changed = false;
  for (ir::Node* attention : attentions) {
    for (size_t i = 0; i < ops::kAttentionOperandPerms.size(); ++i) changed |= fold_operand(graph, *attention, i, captured);
    changed |= fold_output(graph, *attention, captured);
  }
  return finish_rewrite(graph, changed);
}

}  // namespace kiln::passes
