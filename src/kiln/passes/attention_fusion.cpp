// attention_fusion: matching backwards from each Softmax.
#include "kiln/passes/attention_fusion.h"

#include "kiln/passes/rewrite_helpers.h"

namespace kiln::passes {
namespace {

struct AttentionMatch {
  ir::Value *q = nullptr, *kt = nullptr, *v = nullptr, *mask = nullptr, *bias = nullptr;
  double scale = 1.0, fill = -3.4028234663852886e38;
  std::vector<const ir::Node*> nodes;  // matched, in order
  const ir::Node* last = nullptr;      // MatMul(., V)
};

class Matcher {
 public:
  Matcher(const ir::Graph& graph, const std::set<std::string>& captured) : graph_(graph), captured_(captured) {}

  std::optional<AttentionMatch> match(const ir::Node& softmax) {
    AttentionMatch m;
    if (!is_last_axis_softmax(softmax)) return std::nullopt;
    const ir::Node* pv = only_reader(softmax.outputs[0]);
    if (!pv || !is_onnx_op(*pv, "MatMul") || pv->inputs[0] != softmax.outputs[0]) return std::nullopt;
    m.v = pv->inputs[1];
    m.last = pv;
    const ir::Node* step = producer_read_once(softmax.inputs[0]);
    if (step && is_onnx_op(*step, "Where") && is_scalar(step->input(1))) {
      m.mask = step->inputs[0];
      m.fill = element_as_double(*step->inputs[1]->initializer, 0);
      m.nodes.push_back(step);
      step = producer_read_once(step->inputs[2]);
    } else if (step && is_onnx_op(*step, "Add") && step->inputs.size() == 2) {
      const size_t scores_side = produced_by_scale_or_matmul(step->inputs[0]) ? 0 : 1;
      m.bias = step->inputs[1 - scores_side];
      m.nodes.push_back(step);
      step = producer_read_once(step->inputs[scores_side]);
    }
    if (step && is_scalar_scale(*step)) {
      m.scale = scale_of(*step);
      m.nodes.push_back(step);
      step = producer_read_once(step->inputs[0]);
    }
    if (!step || !is_onnx_op(*step, "MatMul")) return std::nullopt;
    m.q = step->inputs[0];
    m.kt = step->inputs[1];
    m.nodes.push_back(step);
    // A scale applied to Q before the product (ViT's) folds in too.
    if (const ir::Node* q_scale = producer_read_once(m.q); q_scale && is_scalar_scale(*q_scale)) {
      m.scale *= scale_of(*q_scale);
      m.q = q_scale->inputs[0];
      m.nodes.push_back(q_scale);
    }
    m.nodes.push_back(&softmax);
    m.nodes.push_back(pv);
    return m;
  }

 private:
  static bool is_scalar(const ir::Value* v) {
    return v && v->initializer && v->initializer->element_count() == 1 && v->initializer->dtype() == DType::kFloat;
  }
  // x / c or x * c with a non-zero constant scalar c (x first).
  static bool is_scalar_scale(const ir::Node& n) {
    return (is_onnx_op(n, "Div") || is_onnx_op(n, "Mul")) && n.inputs.size() == 2 && is_scalar(n.inputs[1]) &&
           element_as_double(*n.inputs[1]->initializer, 0) != 0.0;
  }
  static double scale_of(const ir::Node& n) {
    const double c = element_as_double(*n.inputs[1]->initializer, 0);
    return is_onnx_op(n, "Div") ? 1.0 / c : c;
  }
  static bool is_last_axis_softmax(const ir::Node& n) {
    if (!is_onnx_op(n, "Softmax") || !n.inputs[0] || !n.inputs[0]->type.shape) return false;
    const auto rank = static_cast<int64_t>(n.inputs[0]->type.shape->rank());
    const int64_t axis = n.attr_int("axis", n.opset_version < 13 ? 1 : -1);
    return rank >= 2 && (axis == -1 || axis == rank - 1) && n.inputs[0]->type.dtype == DType::kFloat;
  }
  bool read_once(const ir::Value* v) const {
    return v && !graph_.is_graph_output(v) && !captured_.count(v->name) && graph_.consumers(v).size() == 1;
  }
  const ir::Node* only_reader(const ir::Value* v) const { return read_once(v) ? graph_.consumers(v)[0] : nullptr; }
  const ir::Node* producer_read_once(const ir::Value* v) const { return read_once(v) ? v->producer : nullptr; }
  bool produced_by_scale_or_matmul(const ir::Value* v) const {
    const ir::Node* p = v ? v->producer : nullptr;
    return p && (is_onnx_op(*p, "MatMul") || is_onnx_op(*p, "Div") || is_onnx_op(*p, "Mul"));
  }

  const ir::Graph& graph_;
  const std::set<std::string>& captured_;
};

void replace(ir::Graph& graph, const AttentionMatch& m) {
  ir::Value* out = m.last->outputs[0];
  std::vector<std::string> origins;
  for (const ir::Node* n : m.nodes) origins.push_back(n->name);
  const std::string name = graph.unique_name(m.last->name + "_attention");
  for (const ir::Node* n : m.nodes) graph.remove_node(n);
  ir::Node* attention = graph.add_node("Attention", {m.q, m.kt, m.v, m.mask, m.bias}, {out}, name, "kiln", 1);
  attention->attributes["scale"] = ir::Attribute::of_float(static_cast<float>(m.scale));
  attention->attributes["mask_fill"] = ir::Attribute::of_float(static_cast<float>(m.fill));
  attention->origins = origins;
  while (!attention->inputs.empty() && !attention->inputs.back()) attention->inputs.pop_back();
}

}  // namespace

Result<bool> fuse_attention(ir::Graph& graph, const PassContext&) {
  const std::set<std::string> captured = names_captured_by_subgraphs(graph);
  Matcher matcher(graph, captured);
  std::vector<AttentionMatch> matches;
  for (const auto& n : graph.nodes())
    if (std::optional<AttentionMatch> m = matcher.match(*n)) matches.push_back(*m);
  for (const AttentionMatch& m : matches) replace(graph, m);
  return finish_rewrite(graph, !matches.empty());
}

}  // namespace kiln::passes
