// Constant folding: one forward sweep, so chains of constant nodes fold in a single invocation.
#include "kiln/passes/constant_folding.h"

#include "kiln/ops/evaluate.h"
#include "kiln/passes/rewrite_helpers.h"

namespace kiln::passes {

namespace {

// The node's input tensors when every present input is a constant; nullopt otherwise.
std::optional<std::vector<const Tensor*>> constant_inputs(const ir::Node& node) {
  std::vector<const Tensor*> tensors;
  for (const ir::Value* in : node.inputs) {
    if (in && !in->is_constant()) return std::nullopt;
    tensors.push_back(in ? &*in->initializer : nullptr);
  }
  return tensors;
}

// True when the outputs together hold more than `limit` bytes (or their size overflows).
bool exceeds(const std::vector<ir::TensorType>& types, int64_t limit) {
  int64_t bytes = 0;
  for (const ir::TensorType& t : types) {
    if (!t.shape) continue;
    const int64_t count = shape_element_count(t.shape->static_dims());
    const auto element_bytes = static_cast<int64_t>(dtype_size(t.dtype));
    if (count < 0 || (element_bytes > 0 && count > (limit - bytes) / element_bytes)) return true;
    bytes += count * element_bytes;
  }
  return false;
}

// Folds one node; false when it is left as it is.
Result<bool> fold_node(ir::Graph& graph, const ir::Node& node, const PassContext& ctx) {
  if (has_subgraph(node) || is_nondeterministic(node)) return false;
  const auto inputs = constant_inputs(node);
  if (!inputs) return false;
  const ops::OpDef* def = ctx.registry.find(node.domain, node.op_type, node.opset_version);
  if (!def) return false;
  // A rule that cannot give concrete output types (sequence or optional values) means "not a
  // tensor we can fold"; a rule error on a valid graph was already reported by analysis.
  Result<std::vector<ir::TensorType>> types = ops::infer_concrete_outputs(*def, node, *inputs);
  if (!types.is_ok() || exceeds(*types, ctx.max_folded_bytes)) return false;
  Result<std::vector<Tensor>> values = ops::evaluate_node(*def, node, *inputs);
  // UnsupportedOperator (a dtype or mode the reference kernel lacks) is left for partitioning to
  // place or report; any other failure would recur at every run, so it is reported now.
  if (!values.is_ok() && values.status().code() == StatusCode::kUnsupportedOperator) return false;
  if (!values.is_ok()) return values.status().with_context("constant folding " + node.describe());
  replace_node_with_constants(graph, &node, std::move(*values));
  return true;
}

}  // namespace

Result<bool> fold_constants(ir::Graph& graph, const PassContext& ctx) {
  std::vector<const ir::Node*> order;
  for (const auto& node : graph.nodes()) order.push_back(node.get());
  bool changed = false;
  for (const ir::Node* node : order) {
    KILN_ASSIGN_OR_RETURN(bool folded, fold_node(graph, *node, ctx));
    changed = changed || folded;
  }
  return changed;
}

}  // namespace kiln::passes
