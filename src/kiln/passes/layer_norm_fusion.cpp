// layer_norm_fusion: matching from each Sqrt of a mean of squared deviations.
#include "kiln/passes/layer_norm_fusion.h"

#include <algorithm>

#include "kiln/ops/op_helpers.h"
#include "kiln/ops/reduction_axes.h"
#include "kiln/passes/rewrite_helpers.h"

namespace kiln::passes {
namespace {

bool is_scalar(const ir::Value* v, double* value = nullptr) {
  if (!v || !v->initializer || v->initializer->element_count() != 1) return false;
  if (value) *value = element_as_double(*v->initializer, 0);
  return true;
}

// The first reduced axis of a keepdims ReduceMean over trailing axes of `x`; -1 when not that.
int64_t trailing_mean_axis(const ir::Node& n, const ir::Value* x) {
  if (!is_onnx_op(n, "ReduceMean") || n.inputs[0] != x || n.attr_int("keepdims", 1) != 1 || !x->type.shape) return -1;
  const auto rank = static_cast<int64_t>(x->type.shape->rank());
  const ir::Value* axes_input = n.input(1);
  const auto spec = ops::reduction_axes(n, axes_input != nullptr,
                                        axes_input && axes_input->initializer ? &*axes_input->initializer : nullptr);
  if (!spec.is_ok() || !spec->axes || spec->axes->empty() || spec->noop) return -1;
  std::vector<int64_t> axes = *spec->axes;
  for (int64_t& a : axes) a = a < 0 ? a + rank : a;
  std::sort(axes.begin(), axes.end());
  for (size_t i = 0; i < axes.size(); ++i)
    if (axes[i] != rank - static_cast<int64_t>(axes.size()) + static_cast<int64_t>(i)) return -1;
  return axes.front();
}

// d^2 as Pow(d, 2) or Mul(d, d): returns d.
ir::Value* squared(const ir::Node* n) {
  double p = 0;
  if (n && is_onnx_op(*n, "Pow") && is_scalar(n->input(1), &p) && p == 2.0) return n->inputs[0];
  if (n && is_onnx_op(*n, "Mul") && n->inputs.size() == 2 && n->inputs[0] == n->inputs[1]) return n->inputs[0];
  return nullptr;
}

// The one reader of v, when it is the ai.onnx op `op`.
const ir::Node* reader(const ir::Graph& g, const ir::Value* v, const char* op) {
  const std::vector<ir::Node*> r = g.consumers(v);
  return r.size() == 1 && is_onnx_op(*r[0], op) && !g.is_graph_output(v) ? r[0] : nullptr;
}

// For an Add or Mul reading `v`, its constant other operand of `width` trailing elements.
const ir::Value* affine_operand(const ir::Node* n, const ir::Value* v, int64_t width) {
  if (!n || n->inputs.size() != 2) return nullptr;
  const ir::Value* other = n->inputs[0] == v ? n->inputs[1] : n->inputs[0];
  return other && other->initializer && other->initializer->element_count() == width ? other : nullptr;
}

struct Match {
  ir::Value* x = nullptr;
  const ir::Value *gamma = nullptr, *beta = nullptr;
  int64_t axis = -1;
  double epsilon = 0;
  const ir::Node* last = nullptr;
  std::vector<std::string> origins;
};

std::optional<Match> match(const ir::Graph& g, const ir::Node& sqrt_node) {
  Match m;
  const ir::Node* add_eps = sqrt_node.inputs[0] ? sqrt_node.inputs[0]->producer : nullptr;
  if (!add_eps || !is_onnx_op(*add_eps, "Add") || add_eps->inputs.size() != 2) return std::nullopt;
  const bool eps_second = is_scalar(add_eps->inputs[1], &m.epsilon);
  if (!eps_second && !is_scalar(add_eps->inputs[0], &m.epsilon)) return std::nullopt;
  const ir::Node* var = add_eps->inputs[eps_second ? 0 : 1]->producer;
  ir::Value* d = var ? squared(var->inputs[0] ? var->inputs[0]->producer : nullptr) : nullptr;
  const ir::Node* sub = d ? d->producer : nullptr;
  if (!sub || !is_onnx_op(*sub, "Sub")) return std::nullopt;
  m.x = sub->inputs[0];
  const ir::Node* mean = sub->inputs[1] ? sub->inputs[1]->producer : nullptr;
  m.axis = mean ? trailing_mean_axis(*mean, m.x) : -1;
  if (m.axis < 0 || trailing_mean_axis(*var, var->inputs[0]) != m.axis || !m.x->type.has_static_shape()) return std::nullopt;
  const ir::Node* div = reader(g, sqrt_node.outputs[0], "Div");
  if (!div || div->inputs[0] != d) return std::nullopt;
  int64_t width = 1;
  const std::vector<int64_t> dims = m.x->type.shape->static_dims();
  for (size_t i = static_cast<size_t>(m.axis); i < dims.size(); ++i) width *= dims[i];
  m.last = div;
  const ir::Node* mul = reader(g, div->outputs[0], "Mul");
  if ((m.gamma = affine_operand(mul, div->outputs[0], width))) m.last = mul;
  const ir::Node* add = m.gamma ? reader(g, mul->outputs[0], "Add") : nullptr;
  if ((m.beta = affine_operand(add, mul ? mul->outputs[0] : nullptr, width))) m.last = add;
  const ir::Node* square = var->inputs[0]->producer;
  for (const ir::Node* n : std::vector<const ir::Node*>{mean, sub, square, var, add_eps, &sqrt_node, div})
    m.origins.push_back(n->name);
  if (m.gamma) m.origins.push_back(mul->name);
  if (m.beta) m.origins.push_back(add->name);
  return m;
}

void replace(ir::Graph& g, const Match& m) {
  ir::Value* y = m.last->outputs[0];
  const std::vector<int64_t> dims = m.x->type.shape->static_dims();
  const std::vector<int64_t> norm_dims(dims.begin() + m.axis, dims.end());
  auto as_tensor = [&](const ir::Value* v, double fill) {
    if (v) return v->initializer->reshaped(norm_dims);
    Tensor t = Tensor::allocate(m.x->type.dtype, norm_dims);
    for (int64_t i = 0; i < t.element_count(); ++i) ops::store_double(t, i, fill);
    return t;
  };
  ir::Value* gamma = g.add_constant(g.unique_name(m.last->name + "_scale"), as_tensor(m.gamma, 1.0));
  std::vector<ir::Value*> inputs{m.x, gamma};
  if (m.beta) inputs.push_back(g.add_constant(g.unique_name(m.last->name + "_bias"), as_tensor(m.beta, 0.0)));
  const std::string name = g.unique_name(m.last->name + "_layer_norm");
  g.remove_node(m.last);
  ir::Node* ln = g.add_node("LayerNormalization", inputs, {y}, name, "", 17);
  ln->attributes["axis"] = ir::Attribute::of_int(m.axis);
  ln->attributes["epsilon"] = ir::Attribute::of_float(static_cast<float>(m.epsilon));
  ln->origins = m.origins;
}

}  // namespace

Result<bool> fuse_layer_norm(ir::Graph& graph, const PassContext&) {
  std::vector<Match> matches;
  for (const auto& n : graph.nodes())
    if (is_onnx_op(*n, "Sqrt"))
      if (std::optional<Match> m = match(graph, *n)) matches.push_back(*m);
  for (const Match& m : matches) replace(graph, m);
  if (!matches.empty()) KILN_RETURN_IF_ERROR(graph.topological_sort());
  return !matches.empty();
}

}  // namespace kiln::passes
