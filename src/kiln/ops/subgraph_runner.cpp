// Eager subgraph execution for control-flow kernels.
#include "kiln/ops/subgraph_runner.h"

#include <map>

#include "kiln/ops/evaluate.h"

namespace kiln::ops {

namespace {

// The subgraph's values by name: inputs, constants and node outputs, over the enclosing scope.
class Frame {
 public:
  explicit Frame(const ValueScope& outer) : visible_(outer) {}

  void bind(const ir::Value* v, Value value) {
    Value& slot = local_[v] = std::move(value);
    visible_[v->name] = &slot;
  }
  const Value* find(const ir::Value* v) {
    if (!v) return nullptr;
    if (v->is_constant()) {
      auto it = local_.find(v);
      if (it == local_.end()) it = local_.emplace(v, Value(*v->initializer)).first;
      return &it->second;
    }
    auto it = visible_.find(v->name);
    return it == visible_.end() ? nullptr : it->second;
  }
  const ValueScope& visible() const { return visible_; }

 private:
  std::map<const ir::Value*, Value> local_;
  ValueScope visible_;
};

Status run_node(const ir::Node& node, Frame& frame) {
  KILN_ASSIGN_OR_RETURN(const OpDef* def, resolve_op(OpRegistry::global(), node));
  std::vector<const Value*> inputs;
  for (const ir::Value* in : node.inputs) {
    const Value* t = frame.find(in);
    if (in && !t) return invalid_model(node.describe() + " reads '" + in->name + "', which has no value in its scope");
    inputs.push_back(t);
  }
  KILN_ASSIGN_OR_RETURN(std::vector<Value> outputs, evaluate_node_values(*def, node, inputs, &frame.visible()));
  for (size_t i = 0; i < node.outputs.size(); ++i)
    if (node.outputs[i]) frame.bind(node.outputs[i], std::move(outputs[i]));
  return Status::ok();
}

}  // namespace

Value owned(const Value& v) {
  if (v.is_tensor()) return v.tensor().owns_storage() || !v.tensor().defined() ? v : Value(v.tensor().clone());
  if (v.kind() == Value::Kind::kOptional) return v.has_element() ? Value::optional_of(owned(v.element())) : v;
  std::vector<Tensor> elements;
  for (const Tensor& t : v.elements()) elements.push_back(t.owns_storage() ? t : t.clone());
  return Value::sequence(v.element_dtype(), std::move(elements));
}

Result<std::vector<Value>> run_subgraph(const ir::Graph& body, const std::vector<Value>& inputs,
                                        const ValueScope& scope) {
  if (inputs.size() != body.inputs.size())
    return invalid_argument("subgraph '" + body.name() + "' takes " + std::to_string(body.inputs.size()) +
                            " inputs, got " + std::to_string(inputs.size()));
  Frame frame(scope);
  for (size_t i = 0; i < inputs.size(); ++i) frame.bind(body.inputs[i], inputs[i]);
  for (const auto& node : body.nodes()) KILN_RETURN_IF_ERROR(run_node(*node, frame));
  std::vector<Value> outputs;
  for (const ir::Value* out : body.outputs) {
    const Value* v = frame.find(out);
    if (!v) return invalid_model("subgraph '" + body.name() + "' output '" + out->name + "' has no value");
    outputs.push_back(owned(*v));
  }
  return outputs;
}

Result<const ir::Graph*> subgraph_attribute(const ir::Node& node, const std::string& key) {
  const ir::Attribute* a = node.attr(key);
  if (!a || a->kind != ir::Attribute::Kind::kGraph || !a->g)
    return invalid_model(node.describe() + ": graph attribute '" + key + "' is missing");
  return a->g.get();
}

}  // namespace kiln::ops
