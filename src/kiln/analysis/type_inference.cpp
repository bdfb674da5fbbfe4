// Shape/type inference driver with known-value propagation.
#include "kiln/analysis/type_inference.h"

#include <map>
#include <set>

#include "kiln/ops/evaluate.h"

namespace kiln::analysis {

namespace {

// Values up to this many elements are propagated by evaluating the reference kernel; that covers
// shape arithmetic without turning analysis into constant folding of weights.
constexpr int64_t kMaxPropagatedElements = 4096;

bool is_nondeterministic(const std::string& op) {
  static const std::set<std::string> ops = {"RandomNormal", "RandomUniform", "RandomNormalLike",
                                            "RandomUniformLike", "Bernoulli", "Multinomial"};
  return ops.count(op) != 0;
}

bool has_subgraph(const ir::Node& node) {
  for (const auto& [key, attr] : node.attributes)
    if (attr.g || !attr.graphs.empty()) return true;
  return false;
}

Result<ir::Dim> merge_dim(const ir::Dim& declared, const ir::Dim& inferred, const std::string& what, size_t axis) {
  if (declared.is_static() && inferred.is_static() && declared.value() != inferred.value())
    return invalid_model(what + ": dim " + std::to_string(axis) + " is declared " + declared.to_string() +
                         " but inferred " + inferred.to_string());
  if (inferred.is_static()) return inferred;
  if (declared.is_static()) return declared;
  return inferred.is_symbol() ? inferred : declared;
}

// Known values of a graph: initializers plus values propagated during inference.
class KnownValues {
 public:
  const Tensor* find(const ir::Value* v) const {
    if (!v) return nullptr;
    if (v->is_constant()) return &*v->initializer;
    auto it = propagated_.find(v);
    return it == propagated_.end() ? nullptr : &it->second;
  }
  void set(const ir::Value* v, Tensor t) { propagated_[v] = std::move(t); }
  size_t propagated_count() const { return propagated_.size(); }

 private:
  std::map<const ir::Value*, Tensor> propagated_;
};

// Evaluates a node whose inputs are all known when its outputs are small.
void propagate_values(const ops::OpDef& def, const ir::Node& node, const std::vector<const Tensor*>& values,
                      const ops::InferenceContext& ctx, KnownValues& known) {
  if (is_nondeterministic(node.op_type) || has_subgraph(node)) return;
  for (size_t i = 0; i < node.inputs.size(); ++i)
    if (node.inputs[i] && !values[i]) return;
  for (const ir::TensorType& t : ctx.output_types()) {
    if (!t.has_static_shape() || shape_element_count(t.shape->static_dims()) > kMaxPropagatedElements) return;
  }
  auto outputs = ops::evaluate_node(def, node, values);
  if (!outputs.is_ok()) return;  // the run will report the kernel's error with its context
  for (size_t i = 0; i < node.outputs.size(); ++i)
    if (node.outputs[i] && outputs.value()[i].defined()) known.set(node.outputs[i], std::move(outputs.value()[i]));
}

Status infer_node(ir::Node& node, const ops::OpRegistry& registry, KnownValues& known) {
  KILN_ASSIGN_OR_RETURN(const ops::OpDef* def, ops::resolve_op(registry, node));
  std::vector<const ir::TensorType*> types;
  std::vector<const Tensor*> values;
  for (const ir::Value* in : node.inputs) {
    if (in && in->type.dtype == DType::kUndefined)
      return invalid_model(node.describe() + ": input '" + in->name + "' has no known type");
    types.push_back(in ? &in->type : nullptr);
    values.push_back(known.find(in));
  }
  ops::InferenceContext ctx(node, types, values);
  KILN_RETURN_IF_ERROR(def->infer(ctx));
  for (size_t i = 0; i < node.outputs.size(); ++i) {
    ir::Value* out = node.outputs[i];
    if (!out) continue;
    ir::TensorType inferred = ctx.output_types()[i];
    if (ctx.output_values()[i]) {
      const Tensor& v = *ctx.output_values()[i];
      inferred = ir::TensorType{v.dtype(), ir::Shape::from_static(v.shape())};
      known.set(out, v);
    }
    KILN_ASSIGN_OR_RETURN(out->type,
                          merge_types(out->type, inferred, node.describe() + " output '" + out->name + "'"));
  }
  propagate_values(*def, node, values, ctx, known);
  return Status::ok();
}

void collect_evidence(const ir::Graph& graph, size_t propagated, InferenceEvidence& ev) {
  std::set<std::string> symbols;
  ev.nodes = static_cast<int64_t>(graph.nodes().size());
  ev.values_propagated = static_cast<int64_t>(propagated);
  for (const auto& v : graph.values()) {
    if (v->is_constant()) continue;
    if (!v->type.shape) {
      ++ev.values_without_shape;
    } else if (v->type.shape->is_static()) {
      ++ev.values_with_static_shape;
      continue;
    } else {
      ++ev.values_with_symbolic_shape;
      for (const ir::Dim& d : v->type.shape->dims())
        if (d.is_symbol()) symbols.insert(d.symbol_name());
    }
    if (ev.unresolved.size() < 50) ev.unresolved.push_back(v->name + ": " + v->type.to_string());
  }
  ev.symbols.assign(symbols.begin(), symbols.end());
}

}  // namespace

Result<ir::TensorType> merge_types(const ir::TensorType& declared, const ir::TensorType& inferred,
                                   const std::string& what) {
  ir::TensorType merged = inferred;
  if (declared.dtype != DType::kUndefined && inferred.dtype != DType::kUndefined && declared.dtype != inferred.dtype)
    return invalid_model(what + " is declared " + declared.to_string() + " but inferred " + inferred.to_string());
  if (merged.dtype == DType::kUndefined) merged.dtype = declared.dtype;
  if (!declared.shape) return merged;
  if (!inferred.shape) {
    merged.shape = declared.shape;
    return merged;
  }
  if (declared.shape->rank() != inferred.shape->rank())
    return invalid_model(what + " is declared " + declared.to_string() + " but inferred " + inferred.to_string() +
                         " (rank differs)");
  for (size_t i = 0; i < declared.shape->rank(); ++i) {
    KILN_ASSIGN_OR_RETURN(merged.shape->dims()[i], merge_dim((*declared.shape)[i], (*inferred.shape)[i], what, i));
  }
  return merged;
}

Result<InferenceEvidence> infer_types(ir::Graph& graph, const ops::OpRegistry& registry) {
  KnownValues known;
  for (const ir::Value* in : graph.inputs)
    if (in->type.dtype == DType::kUndefined)
      return invalid_model("graph input '" + in->name + "' has no element type");
  for (const auto& node : graph.nodes()) KILN_RETURN_IF_ERROR(infer_node(*node, registry, known));
  InferenceEvidence evidence;
  collect_evidence(graph, known.propagated_count(), evidence);
  return evidence;
}

}  // namespace kiln::analysis
