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

Result<ir::Dim> merge_dim(const ir::Dim& declared, const ir::Dim& inferred, const std::string& what, size_t axis) {
  if (declared.is_static() && inferred.is_static() && declared.value() != inferred.value())
    return invalid_model(what + ": dim " + std::to_string(axis) + " is declared " + declared.to_string() +
                         " but inferred " + inferred.to_string());
  if (inferred.is_static()) return inferred;
  if (declared.is_static()) return declared;
  return inferred.is_symbol() ? inferred : declared;
}

// Known values of a graph: initializers plus values propagated during inference, over those of
// the enclosing graphs (a subgraph's own values are distinct from the enclosing values it reads).
class KnownValues {
 public:
  explicit KnownValues(const KnownValues* enclosing = nullptr) : enclosing_(enclosing) {}

  const Tensor* find(const ir::Value* v) const {
    if (!v) return nullptr;
    if (v->is_constant()) return &*v->initializer;
    auto it = propagated_.find(v);
    if (it != propagated_.end()) return &it->second;
    return enclosing_ ? enclosing_->find(v) : nullptr;
  }
  void set(const ir::Value* v, Tensor t) { propagated_[v] = std::move(t); }
  size_t propagated_count() const { return propagated_.size(); }

 private:
  const KnownValues* enclosing_;
  std::map<const ir::Value*, Tensor> propagated_;
};

// Evaluates a node whose inputs are all known when its outputs are small.
void propagate_values(const ops::OpDef& def, const ir::Node& node, const std::vector<const Tensor*>& values,
                      const ops::InferenceContext& ctx, KnownValues& known) {
  if (ops::is_nondeterministic(node) || node.has_subgraph()) return;
  for (size_t i = 0; i < node.inputs.size(); ++i)
    if (node.inputs[i] && !values[i]) return;
  if (def.accepts_containers) return;
  for (const ir::TensorType& t : ctx.output_types()) {
    if (!t.has_static_shape() || shape_element_count(t.shape->static_dims()) > kMaxPropagatedElements) return;
  }
  auto outputs = ops::evaluate_node(def, node, values);
  if (!outputs.is_ok()) return;  // the run will report the kernel's error with its context
  for (size_t i = 0; i < node.outputs.size(); ++i)
    if (node.outputs[i] && outputs.value()[i].defined()) known.set(node.outputs[i], std::move(outputs.value()[i]));
}

Status infer_graph(ir::Graph& graph, const ops::OpRegistry& registry, KnownValues& known);

// ONNX lets body inputs go untyped when the node's inputs say what they are: Loop bodies take
// (iteration int64, cond bool, carried...), Scan-9+ bodies (states..., scan elements...),
// SequenceMap bodies one element of each sequence input (or the tensor input itself).
ir::TensorType body_input_type(const ir::Node& node, size_t i) {
  auto node_input = [&](size_t k) -> ir::TensorType {
    const ir::Value* v = node.input(k);
    return v ? v->type : ir::TensorType{};
  };
  if (node.op_type == "Loop") {
    if (i == 0) return ir::make_type(DType::kInt64, {});
    if (i == 1) return ir::make_type(DType::kBool, {});
    return node_input(i);
  }
  if (node.op_type == "Scan" && node.opset_version >= 9) {
    const ir::TensorType t = node_input(i);
    const size_t states = node.inputs.size() - static_cast<size_t>(node.attr_int("num_scan_inputs", 0));
    return i < states ? t : ir::TensorType{t.dtype};  // a scan element: the dtype, rank one less
  }
  if (node.op_type == "SequenceMap") {
    const ir::TensorType t = node_input(i);
    return !t.is_tensor() && t.element ? *t.element : t;
  }
  return {};
}

constexpr int64_t kCopiedConstantBytes = 4096;

// The branch an If whose condition is known will not run, or null.
const ir::Graph* untaken_branch(const ir::Node& node, const KnownValues& known) {
  if (node.op_type != "If" || !node.domain.empty()) return nullptr;
  const Tensor* cond = known.find(node.input(0));
  if (!cond || cond->dtype() != DType::kBool || cond->element_count() != 1) return nullptr;
  const auto branch = node.attributes.find(cond->data<bool>()[0] ? "else_branch" : "then_branch");
  return branch == node.attributes.end() ? nullptr : branch->second.g.get();
}

// Types inside the node's subgraphs first (the node's rule reads its bodies' output types): values
// a subgraph reads from the enclosing scopes take their types and known values from there. A name
// only a nested subgraph reads has no value here: that subgraph takes it in its turn. The branch
// of an If that will not run (its condition known from the shapes a plan pins) is left as it is:
// it need not fit these shapes (a batch-of-one branch squeezing a dim that is not one).
Status infer_subgraphs(ir::Node& node, const ir::Graph& enclosing, const KnownValues& known,
                       const ops::OpRegistry& registry) {
  Status status;
  const ir::Graph* untaken = untaken_branch(node, known);
  ir::for_each_subgraph(node, [&](ir::Graph& sub) {
    if (!status.is_ok() || &sub == untaken) return;
    for (size_t i = 0; i < sub.inputs.size(); ++i)
      if (!sub.inputs[i]->type.is_known()) sub.inputs[i]->type = body_input_type(node, i);
    KnownValues sub_known(&known);
    for (const std::string& name : sub.outer_scope_reads()) {
      ir::Value* captured = sub.find_value(name);
      const ir::Value* outer = enclosing.find_value_in_scope(name);
      if (!captured || !outer) continue;
      if (outer->type.is_known()) captured->type = outer->type;
      // A small enclosing constant (axes, shapes, exponents) becomes the body's own copy, so the
      // body's kernels take it as a constant; weights stay read from the enclosing scope.
      if (outer->is_constant() && !captured->is_constant() && outer->initializer->byte_size() <= kCopiedConstantBytes)
        captured->initializer = outer->initializer->clone();
      if (const Tensor* value = known.find(outer)) sub_known.set(captured, *value);
    }
    status = infer_graph(sub, registry, sub_known).with_context(node.describe() + " subgraph '" + sub.name() + "'");
  });
  return status;
}

Status infer_node(ir::Node& node, const ir::Graph& graph, const ops::OpRegistry& registry, KnownValues& known) {
  if (node.has_subgraph()) KILN_RETURN_IF_ERROR(infer_subgraphs(node, graph, known, registry));
  KILN_ASSIGN_OR_RETURN(const ops::OpDef* def, ops::resolve_op(registry, node));
  std::vector<const ir::TensorType*> types;
  std::vector<const Tensor*> values;
  for (const ir::Value* in : node.inputs) {
    if (in && !in->type.is_known())
      return invalid_model(node.describe() + ": input '" + in->name + "' has no known type");
    if (in && !in->type.is_tensor() && !def->accepts_containers)
      return unsupported_operator(node.describe() + ": input '" + in->name + "' is a " + in->type.to_string() +
                                  ", which this operator does not take");
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
  if (!declared.is_known()) return inferred;
  if (!inferred.is_known()) return declared;
  if (declared.kind != inferred.kind)
    return invalid_model(what + " is declared " + declared.to_string() + " but inferred " + inferred.to_string());
  if (!declared.is_tensor()) {
    // Containers: the element types must agree; the inferred element refines the declared one.
    KILN_ASSIGN_OR_RETURN(ir::TensorType element, merge_types(*declared.element, *inferred.element, what));
    ir::TensorType merged = inferred;
    merged.element = std::make_shared<const ir::TensorType>(std::move(element));
    return merged;
  }
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
  const std::string types = " (declared " + declared.to_string() + ", inferred " + inferred.to_string() + ")";
  for (size_t i = 0; i < declared.shape->rank(); ++i) {
    KILN_ASSIGN_OR_RETURN(merged.shape->dims()[i], merge_dim((*declared.shape)[i], (*inferred.shape)[i], what + types, i));
  }
  return merged;
}

namespace {

Status infer_graph(ir::Graph& graph, const ops::OpRegistry& registry, KnownValues& known) {
  for (const ir::Value* in : graph.inputs)
    if (!in->type.is_known()) return invalid_model("graph input '" + in->name + "' has no element type");
  for (const auto& node : graph.nodes()) KILN_RETURN_IF_ERROR(infer_node(*node, graph, registry, known));
  return Status::ok();
}

}  // namespace

Result<InferenceEvidence> infer_types(ir::Graph& graph, const ops::OpRegistry& registry) {
  KnownValues known;
  KILN_RETURN_IF_ERROR(infer_graph(graph, registry, known));
  InferenceEvidence evidence;
  collect_evidence(graph, known.propagated_count(), evidence);
  return evidence;
}

}  // namespace kiln::analysis
