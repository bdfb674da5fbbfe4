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

// One inference walk: the registry, and where the declarations it finds stale are recorded
// (nowhere while it probes a copy of a Loop body).
struct Walk {
  const ops::OpRegistry& registry;
  std::vector<DeclarationDisagreement>* disagreements;

  void record(const ir::Value& v, const std::string& where, const ir::TensorType& declared,
              const ir::TensorType& used) const {
    if (disagreements) disagreements->push_back({v.name, where, declared.to_string(), used.to_string()});
  }
};

// A declaration loosened before its value was typed (a loop-carried value's): recorded once the
// value's type is final, if that type drops what the declaration stated.
struct Loosened {
  ir::Value* value;
  std::string where;
  ir::TensorType declared;
};

Status infer_graph(ir::Graph& graph, const std::string& where, const Walk& walk, KnownValues& known);

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

// Infers `body`, a subgraph of `node` in `enclosing`: values it reads from the enclosing scopes take
// their types and known values from there. A name only a nested subgraph reads has no value here:
// that subgraph takes it in its turn.
Status infer_body(ir::Graph& body, const ir::Node& node, const ir::Graph& enclosing, const KnownValues& known,
                  const Walk& walk, const std::string& where) {
  KnownValues body_known(&known);
  for (const std::string& name : body.outer_scope_reads()) {
    ir::Value* captured = body.find_value(name);
    const ir::Value* outer = enclosing.find_value_in_scope(name);
    if (!captured || !outer) continue;
    if (outer->type.is_known()) captured->type = outer->type;
    // A small enclosing constant (axes, shapes, exponents) becomes the body's own copy, so the
    // body's kernels take it as a constant; weights stay read from the enclosing scope.
    if (outer->is_constant() && !captured->is_constant() && outer->initializer->byte_size() <= kCopiedConstantBytes)
      captured->initializer = outer->initializer->clone();
    if (const Tensor* value = known.find(outer)) body_known.set(captured, *value);
  }
  return infer_graph(body, where, walk, body_known).with_context(node.describe() + " subgraph '" + body.name() + "'");
}

// Loop-carried values may change shape from one iteration to the next (a tensor that starts empty
// and grows by a Concat each time). Their types are settled before the body is inferred: from the
// type each enters with (its declaration a hint), a probe inference of a copy of the body gives
// what an iteration makes of it, and dims that change become unknown, until an iteration changes
// nothing. Declarations along each carried value's path (the body's input and output, the node's
// output) are loosened where they state a size the iterations do not keep.
Status settle_carried_types(ir::Node& node, ir::Graph& body, const ir::Graph& enclosing, const KnownValues& known,
                            const Walk& walk, const std::string& body_where, const std::string& where,
                            std::vector<Loosened>& loosened) {
  const size_t carried = node.inputs.size() < 2 ? 0 : node.inputs.size() - 2;
  if (carried == 0 || body.inputs.size() != carried + 2 || body.outputs.size() < carried + 1)
    return Status::ok();  // nothing carried, or a body Loop's rule refuses
  std::vector<ir::TensorType> types(carried);
  for (size_t k = 0; k < carried; ++k) {
    const ir::Value* entering = node.input(k + 2);
    const ir::Value* input = body.inputs[k + 2];
    KILN_ASSIGN_OR_RETURN(Reconciled settled,
                          reconcile_declared(input->type, entering ? entering->type : ir::TensorType{},
                                             node.describe() + " loop-carried input '" + input->name + "'"));
    types[k] = settled.type;
  }
  const Walk probing{walk.registry, nullptr};
  for (bool changed = true; changed;) {
    changed = false;
    std::unique_ptr<ir::Graph> probe = body.clone(body.parent());
    for (size_t k = 0; k < carried; ++k) probe->inputs[k + 2]->type = types[k];
    for (size_t i = 0; i < 2; ++i)
      if (!probe->inputs[i]->type.is_known()) probe->inputs[i]->type = body_input_type(node, i);
    KILN_RETURN_IF_ERROR(infer_body(*probe, node, enclosing, known, probing, body_where));
    for (size_t k = 0; k < carried; ++k) {
      const ir::TensorType& produced = probe->outputs[k + 1]->type;
      if (produced.is_tensor() && types[k].is_tensor() && produced.dtype != DType::kUndefined &&
          types[k].dtype != DType::kUndefined && produced.dtype != types[k].dtype)
        return invalid_model(node.describe() + ": loop-carried value '" + body.inputs[k + 2]->name + "' enters as " +
                             types[k].to_string() + " but an iteration gives " + produced.to_string() +
                             " (ONNX Loop: a loop-carried value keeps its element type)");
      const ir::TensorType united = ir::unite(types[k], produced);
      changed = changed || united != types[k];
      types[k] = united;
    }
  }
  auto loosen = [&](ir::Value* v, const ir::TensorType& to, const std::string& in) {
    if (!v || v->is_constant()) return;  // a constant's type is its data's
    loosened.push_back({v, in, v->type});
    v->type = to;
  };
  for (size_t k = 0; k < carried; ++k) {
    loosen(body.inputs[k + 2], types[k], body_where);
    loosen(body.outputs[k + 1], within(body.outputs[k + 1]->type, types[k]), body_where);
    if (k < node.outputs.size()) loosen(node.outputs[k], within(node.outputs[k]->type, types[k]), where);
  }
  return Status::ok();
}

// Types inside the node's subgraphs first (the node's rule reads its bodies' output types), Loop
// bodies' carried values settled first. The branch of an If that will not run (its condition
// known from the shapes a plan pins) is left as it is: it need not fit these shapes (a
// batch-of-one branch squeezing a dim that is not one).
Status infer_subgraphs(ir::Node& node, const ir::Graph& enclosing, const KnownValues& known, const Walk& walk,
                       const std::string& where, std::vector<Loosened>& loosened) {
  Status status;
  const ir::Graph* untaken = untaken_branch(node, known);
  ir::for_each_subgraph(node, [&](ir::Graph& sub) {
    if (!status.is_ok() || &sub == untaken) return;
    const std::string sub_where = where + " > " + node.describe() + " subgraph '" + sub.name() + "'";
    if (node.op_type == "Loop" && node.domain.empty()) {
      status = settle_carried_types(node, sub, enclosing, known, walk, sub_where, where, loosened);
      if (!status.is_ok()) return;
    }
    for (size_t i = 0; i < sub.inputs.size(); ++i)
      if (!sub.inputs[i]->type.is_known()) sub.inputs[i]->type = body_input_type(node, i);
    status = infer_body(sub, node, enclosing, known, walk, sub_where);
  });
  return status;
}

// The types output `i` of `node` may have at run time when its rule gives their union: each
// branch's of an If, but the one its known condition skips. A declaration that contradicts one
// of them is stale even where it does not contradict the union.
std::vector<ir::TensorType> branch_types(const ir::Node& node, size_t i, const KnownValues& known) {
  std::vector<ir::TensorType> types;
  if (node.op_type != "If" || !node.domain.empty()) return types;
  const ir::Graph* untaken = untaken_branch(node, known);
  for (const char* key : {"then_branch", "else_branch"}) {
    const ir::Attribute* branch = node.attr(key);
    if (branch && branch->g && branch->g.get() != untaken && i < branch->g->outputs.size())
      types.push_back(branch->g->outputs[i]->type);
  }
  return types;
}

// The output's declared type reconciled with the inferred one; a stale declaration gives way to
// the inferred type and is recorded.
Status settle_output_type(ir::Value& out, const ir::TensorType& inferred, const std::vector<ir::TensorType>& branches,
                          const std::string& what, const Walk& walk, const std::string& where) {
  KILN_ASSIGN_OR_RETURN(Reconciled merged, reconcile_declared(out.type, inferred, what));
  bool stale = merged.contradicted;
  for (const ir::TensorType& branch : branches) {
    KILN_ASSIGN_OR_RETURN(Reconciled with_branch, reconcile_declared(out.type, branch, what));
    stale = stale || with_branch.contradicted;
  }
  if (stale) walk.record(out, where, out.type, inferred);
  out.type = stale ? inferred : merged.type;
  return Status::ok();
}

Status infer_node(ir::Node& node, const ir::Graph& graph, const std::string& where, const Walk& walk,
                  KnownValues& known) {
  std::vector<Loosened> loosened;
  if (node.has_subgraph()) KILN_RETURN_IF_ERROR(infer_subgraphs(node, graph, known, walk, where, loosened));
  KILN_ASSIGN_OR_RETURN(const ops::OpDef* def, ops::resolve_op(walk.registry, node));
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
    KILN_RETURN_IF_ERROR(settle_output_type(*out, inferred, branch_types(node, i, known),
                                            node.describe() + " output '" + out->name + "'", walk, where));
  }
  for (const Loosened& l : loosened)
    if (!keeps_declared_shape(l.declared, l.value->type)) walk.record(*l.value, l.where, l.declared, l.value->type);
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

Status infer_graph(ir::Graph& graph, const std::string& where, const Walk& walk, KnownValues& known) {
  for (const ir::Value* in : graph.inputs)
    if (!in->type.is_known()) return invalid_model("graph input '" + in->name + "' has no element type");
  for (const auto& node : graph.nodes()) KILN_RETURN_IF_ERROR(infer_node(*node, graph, where, walk, known));
  return Status::ok();
}

}  // namespace

Result<InferenceEvidence> infer_types(ir::Graph& graph, const ops::OpRegistry& registry) {
  KnownValues known;
  InferenceEvidence evidence;
  KILN_RETURN_IF_ERROR(infer_graph(graph, graph.name(), Walk{registry, &evidence.declaration_disagreements}, known));
  collect_evidence(graph, known.propagated_count(), evidence);
  return evidence;
}

}  // namespace kiln::analysis
