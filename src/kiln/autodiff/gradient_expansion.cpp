// expand_gradients: reverse-mode differentiation of the nodes between Gradient's xs and y.
#include "kiln/autodiff/gradient_expansion.h"

#include <set>

#include "kiln/autodiff/derivatives.h"
#include "kiln/autodiff/gradient_builder.h"

namespace kiln::autodiff {
namespace {

constexpr const char* kTrainingDomain = "ai.onnx.preview.training";

bool is_gradient(const ir::Node& node) { return node.domain == kTrainingDomain && node.op_type == "Gradient"; }

struct GradientRequest {
  std::vector<ir::Value*> xs;
  std::set<const ir::Value*> leaves;  // xs and zs: independent variables, not differentiated through
  ir::Value* y = nullptr;
};

// Reads xs, zs and y and checks that the node's inputs are xs followed by zs.
Result<GradientRequest> read_request(const ir::Graph& graph, const ir::Node& node) {
  auto names = [&](const char* key) {
    const ir::Attribute* a = node.attr(key);
    return a ? a->strings : std::vector<std::string>{};
  };
  const std::vector<std::string> xs = names("xs"), zs = names("zs");
  const std::string y = node.attr_string("y");
  GradientRequest request;
  if (xs.empty()) return invalid_model(node.describe() + ": attribute 'xs' must name at least one value");
  if (node.outputs.size() > xs.size())
    return invalid_model(node.describe() + ": " + std::to_string(node.outputs.size()) + " outputs but 'xs' names " +
                         std::to_string(xs.size()) + " values");
  if (node.inputs.size() != xs.size() + zs.size())
    return invalid_model(node.describe() + ": inputs must be the values of 'xs' followed by those of 'zs'");
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    const std::string& want = i < xs.size() ? xs[i] : zs[i - xs.size()];
    if (!node.inputs[i] || node.inputs[i]->name != want)
      return invalid_model(node.describe() + ": input " + std::to_string(i) + " must be '" + want + "', as 'xs'/'zs' name it");
    request.leaves.insert(node.inputs[i]);
    if (i < xs.size()) request.xs.push_back(node.inputs[i]);
  }
  request.y = graph.find_value(y);
  if (y.empty() || !request.y) return invalid_model(node.describe() + ": attribute 'y' names no value of the graph ('" + y + "')");
  return request;
}

// The nodes y depends on, stopping at the leaves.
std::set<const ir::Node*> forward_nodes(const GradientRequest& request) {
  std::set<const ir::Node*> nodes;
  std::vector<const ir::Value*> pending{request.y};
  while (!pending.empty()) {
    const ir::Value* v = pending.back();
    pending.pop_back();
    if (request.leaves.count(v) || !v->producer || !nodes.insert(v->producer).second) continue;
    for (const ir::Value* in : v->producer->inputs)
      if (in) pending.push_back(in);
  }
  return nodes;
}

// Values of the forward nodes that depend on some x (only they need gradients).
std::set<const ir::Value*> values_depending_on_xs(const std::vector<const ir::Node*>& order, const GradientRequest& request) {
  std::set<const ir::Value*> depends(request.xs.begin(), request.xs.end());
  for (const ir::Node* n : order) {
    bool any = false;
    for (const ir::Value* in : n->inputs) any = any || (in && depends.count(in));
    if (any)
      for (const ir::Value* out : n->outputs)
        if (out && !request.leaves.count(out)) depends.insert(out);
  }
  return depends;
}

// Backward pass: returns the gradient of y with respect to each x (nullptr where y does not depend on it).
Result<std::vector<ir::Value*>> differentiate(ir::Graph& graph, GradientBuilder& b, const GradientRequest& request) {
  const std::set<const ir::Node*> on_path = forward_nodes(request);
  std::vector<const ir::Node*> order;  // forward nodes in execution order
  for (const auto& n : graph.nodes())
    if (on_path.count(n.get())) order.push_back(n.get());
  const std::set<const ir::Value*> depends = values_depending_on_xs(order, request);
  std::map<const ir::Value*, ir::Value*> grads;
  KILN_ASSIGN_OR_RETURN(grads[request.y], b.filled_like(request.y, 1.0));
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const ir::Node& n = **it;
    std::vector<ir::Value*> output_grads;
    bool any = false;
    for (const ir::Value* out : n.outputs) {
      const auto g = out ? grads.find(out) : grads.end();
      output_grads.push_back(g == grads.end() ? nullptr : g->second);
      any = any || output_grads.back();
    }
    if (!any) continue;
    if (n.has_subgraph()) return unsupported_operator(n.describe() + ": Gradient cannot differentiate through control flow");
    KILN_ASSIGN_OR_RETURN(std::vector<ir::Value*> input_grads, input_gradients(b, n, output_grads));
    for (size_t i = 0; i < n.inputs.size() && i < input_grads.size(); ++i) {
      const ir::Value* in = n.inputs[i];
      if (!in || !input_grads[i] || !depends.count(in)) continue;
      ir::Value*& sum = grads[in];
      sum = sum ? b.add(sum, input_grads[i]) : input_grads[i];
    }
  }
  std::vector<ir::Value*> result;
  for (ir::Value* x : request.xs) {
    const auto g = grads.find(x);
    result.push_back(g == grads.end() ? nullptr : g->second);
  }
  return result;
}

Status expand_one(ir::Graph& graph, const ir::Node* gradient, int opset) {
  KILN_ASSIGN_OR_RETURN(GradientRequest request, read_request(graph, *gradient));
  const std::vector<ir::Value*> outputs = gradient->outputs;
  const std::string name = gradient->name.empty() ? "gradient" : gradient->name;
  GradientBuilder b(graph, name, opset);
  KILN_ASSIGN_OR_RETURN(std::vector<ir::Value*> grads, differentiate(graph, b, request));
  graph.remove_node(gradient);
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (!outputs[i]) continue;
    if (!grads[i]) {
      KILN_ASSIGN_OR_RETURN(grads[i], b.filled_like(request.xs[i], 0.0));
    }
    graph.add_node("Identity", {grads[i]}, {outputs[i]}, graph.unique_name(name + "/output"), "", opset);
  }
  return Status::ok();
}

bool holds_gradient(const ir::Graph& graph) {
  for (const auto& n : graph.nodes()) {
    bool inner = is_gradient(*n);
    for_each_subgraph(*n, [&](ir::Graph& sub) { inner = inner || holds_gradient(sub); });
    if (inner) return true;
  }
  return false;
}

}  // namespace

Result<int> expand_gradients(ir::Model& model) {
  ir::Graph& graph = *model.graph;
  std::vector<const ir::Node*> gradients;
  for (const auto& n : graph.nodes()) {
    if (is_gradient(*n)) gradients.push_back(n.get());
    bool in_body = false;
    for_each_subgraph(*n, [&](ir::Graph& sub) { in_body = in_body || holds_gradient(sub); });
    if (in_body) return unsupported_operator(n->describe() + ": a Gradient inside its body is not supported");
  }
  const auto onnx = model.opset_imports.find("");
  const int opset = onnx == model.opset_imports.end() ? 1 : static_cast<int>(onnx->second);
  for (const ir::Node* g : gradients) KILN_RETURN_IF_ERROR(expand_one(graph, g, opset));
  if (!gradients.empty()) KILN_RETURN_IF_ERROR(graph.topological_sort());
  return static_cast<int>(gradients.size());
}

}  // namespace kiln::autodiff
