// pad_folding: Pad (zeros around spatial dims) + Conv -> Conv with larger pads.
#include "kiln/passes/pad_folding.h"

#include <optional>

#include "kiln/ops/op_helpers.h"
#include "kiln/passes/rewrite_helpers.h"

namespace kiln::passes {
namespace {

// The pads of a Pad node ([begin per axis..., end per axis...]) when it adds zeros with constant
// arguments; nullopt otherwise.
std::optional<std::vector<int64_t>> zero_pads(const ir::Node& pad) {
  if (pad.attr_string("mode", "constant") != "constant") return std::nullopt;
  if (pad.opset_version < 11) {
    if (pad.attr_float("value", 0.0f) != 0.0f) return std::nullopt;
    return pad.attr_ints(pad.opset_version < 2 ? "paddings" : "pads");
  }
  if (pad.input(3)) return std::nullopt;  // axes (opset 18): rare in exports, left alone
  const ir::Value* pads = pad.input(1);
  if (!pads || !pads->initializer) return std::nullopt;
  if (const ir::Value* value = pad.input(2)) {
    if (!value->initializer || value->initializer->element_count() != 1 || element_as_double(*value->initializer, 0) != 0.0)
      return std::nullopt;
  }
  Result<std::vector<int64_t>> read = ops::read_int64s(*pads->initializer, "pads");
  if (!read.is_ok()) return std::nullopt;
  return read.value();
}

// The Conv pads after taking `pad`'s spatial pads, when the pair can fold.
std::optional<std::vector<int64_t>> folded_pads(const ir::Node& pad, const ir::Node& conv) {
  const ir::Value* x = pad.input(0);
  if (!x || !x->type.shape || x->type.dtype != DType::kFloat) return std::nullopt;
  const size_t rank = x->type.shape->rank();
  const std::optional<std::vector<int64_t>> pads = zero_pads(pad);
  if (rank < 3 || !pads || pads->size() != 2 * rank) return std::nullopt;
  const size_t spatial = rank - 2;
  for (size_t a : {size_t{0}, size_t{1}})
    if ((*pads)[a] != 0 || (*pads)[rank + a] != 0) return std::nullopt;
  for (int64_t p : *pads)
    if (p < 0) return std::nullopt;
  const std::string auto_pad = conv.attr_string("auto_pad", "NOTSET");
  if (auto_pad != "NOTSET" && auto_pad != "VALID") return std::nullopt;
  std::vector<int64_t> conv_pads = auto_pad == "VALID" ? std::vector<int64_t>() : conv.attr_ints("pads");
  if (conv_pads.empty()) conv_pads.assign(2 * spatial, 0);
  if (conv_pads.size() != 2 * spatial) return std::nullopt;
  for (size_t d = 0; d < spatial; ++d) {
    conv_pads[d] += (*pads)[2 + d];
    conv_pads[spatial + d] += (*pads)[rank + 2 + d];
  }
  return conv_pads;
}

}  // namespace

Result<bool> fold_pads(ir::Graph& graph, const PassContext&) {
  const std::set<std::string> captured = names_captured_by_subgraphs(graph);
  std::vector<ir::Node*> convs;
  for (const auto& n : graph.nodes())
    if (is_onnx_op(*n, "Conv")) convs.push_back(n.get());
  bool changed = false;
  for (ir::Node* conv : convs) {
    ir::Value* padded = conv->input(0);
    ir::Node* pad = padded ? padded->producer : nullptr;
    if (!pad || !is_onnx_op(*pad, "Pad") || graph.is_graph_output(padded) || captured.count(padded->name) ||
        graph.consumers(padded).size() != 1)
      continue;
    const std::optional<std::vector<int64_t>> pads = folded_pads(*pad, *conv);
    if (!pads) continue;
    conv->attributes["pads"] = ir::Attribute::of_ints(*pads);
    conv->attributes.erase("auto_pad");
    conv->inputs[0] = pad->inputs[0];
    conv->origins = conv->source_nodes();
    conv->origins.push_back(pad->name);
    graph.remove_node(pad);
    changed = true;
  }
  return finish_rewrite(graph, changed);
}

}  // namespace kiln::passes
