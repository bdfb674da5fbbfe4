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

  void bind(const ir::Value* v, Tensor t) {
    Tensor& slot = local_[v] = std::move(t);
    visible_[v->name] = &slot;
  }
  const Tensor* find(const ir::Value* v) const {
    if (!v) return nullptr;
    if (v->is_constant()) return &*v->initializer;
    auto it = visible_.find(v->name);
    return it == visible_.end() ? nullptr : it->second;
  }
  const ValueScope& visible() const { return visible_; }

 private:
  std::map<const ir::Value*, Tensor> local_;
  ValueScope visible_;
};

Status run_node(const ir::Node& node, Frame& frame) {
  KILN_ASSIGN_OR_RETURN(const OpDef* def, resolve_op(OpRegistry::global(), node));
  std::vector<const Tensor*> inputs;
  for (const ir::Value* in : node.inputs) {
    const Tensor* t = frame.find(in);
    if (in && !t) return invalid_model(node.describe() + " reads '" + in->name + "', which has no value in its scope");
    inputs.push_back(t);
  }
  KILN_ASSIGN_OR_RETURN(std::vector<Tensor> outputs, evaluate_node(*def, node, inputs, &frame.visible()));
  for (size_t i = 0; i < node.outputs.size(); ++i)
    if (node.outputs[i]) frame.bind(node.outputs[i], std::move(outputs[i]));
  return Status::ok();
}

}  // namespace

Result<std::vector<Tensor>> run_subgraph(const ir::Graph& body, const std::vector<Tensor>& inputs,
                                         const ValueScope& scope) {
  if (inputs.size() != body.inputs.size())
    return invalid_argument("subgraph '" + body.name() + "' takes " + std::to_string(body.inputs.size()) +
                            " inputs, got " + std::to_string(inputs.size()));
  Frame frame(scope);
  for (size_t i = 0; i < inputs.size(); ++i) frame.bind(body.inputs[i], inputs[i]);
  for (const auto& node : body.nodes()) KILN_RETURN_IF_ERROR(run_node(*node, frame));
  std::vector<Tensor> outputs;
  for (const ir::Value* out : body.outputs) {
    const Tensor* t = frame.find(out);
    if (!t) return invalid_model("subgraph '" + body.name() + "' output '" + out->name + "' has no value");
    outputs.push_back(*t);
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
