// product_slicing: Slice(product, last axis) -> product over the sliced weight columns.
#include "kiln/ops/fused_product_inputs.h"
#include "kiln/passes/product_slicing.h"

#include <optional>
#include <string>
#include <vector>

#include "kiln/ops/data_movement.h"
#include "kiln/ops/op_helpers.h"
#include "kiln/passes/rewrite_helpers.h"

namespace kiln::passes {
namespace {


struct Columns {
  int64_t begin = 0, count = 0;
};

bool is_product(const ir::Node& n) {
  return is_onnx_op(n, "MatMul") || (n.domain == "kiln" && n.op_type == "FusedMatMul");
}

// The product's constant weights [K, N] (and constant bias [N], if any) when it can be cut by columns.
bool sliceable_product(const ir::Node& p) {
  if (!is_product(p) || p.input(ops::kFusedResidualInput)) return false;
  const ir::Value* w = p.input(1);
  const ir::Value* y = p.outputs.empty() ? nullptr : p.outputs[0];
  if (!w || !w->initializer || w->initializer->rank() != 2 || !y || !y->type.shape || !y->type.shape->is_static()) return false;
  const ir::Value* bias = p.input(ops::kFusedBiasInput);
  return !bias || (bias->initializer && bias->initializer->rank() == 1);
}

// The columns a Slice of `y` reads when it cuts the last axis only (step 1, constant arguments).
std::optional<Columns> last_axis_columns(const ir::Node& slice, const ir::Value* y) {
  if (!is_onnx_op(slice, "Slice") || slice.inputs.empty() || slice.inputs[0] != y) return std::nullopt;
  const ir::Value* out = slice.outputs.empty() ? nullptr : slice.outputs[0];
  if (!out || !out->type.shape || !out->type.shape->is_static()) return std::nullopt;
  std::vector<const Tensor*> args;
  for (size_t i = 1; i < slice.inputs.size(); ++i) {
    const ir::Value* a = slice.input(i);
    if (a && !a->initializer) return std::nullopt;
    args.push_back(a ? &*a->initializer : nullptr);
  }
  const std::vector<int64_t> in = y->type.shape->static_dims(), sliced = out->type.shape->static_dims();
  Result<ops::StridedView> view = ops::slice_view(slice, in, args);
  if (!view.is_ok() || view.value().strides != ops::contiguous_strides(in) || sliced.size() != in.size()) return std::nullopt;
  for (size_t d = 0; d + 1 < in.size(); ++d)
    if (sliced[d] != in[d]) return std::nullopt;
  if (sliced.back() == 0) return std::nullopt;
  return Columns{view.value().base, sliced.back()};
}

// Columns [begin, begin + count) of a constant [rows, N] (or [N]) tensor.
Tensor columns_of(const Tensor& t, Columns c) {
  const int64_t n = t.shape().back(), rows = t.element_count() / n;
  std::vector<int64_t> shape = t.shape();
  shape.back() = c.count;
  Tensor out = Tensor::allocate(t.dtype(), shape);
  for (int64_t r = 0; r < rows; ++r) ops::copy_elements(t, r * n + c.begin, out, r * c.count, c.count);
  return out;
}

// One product per Slice reading `p`, then `p` and the Slices removed; false when any reader of
// p's output is not such a Slice.
bool split(ir::Graph& graph, const ir::Node& p, const std::set<std::string>& captured) {
  ir::Value* y = p.outputs[0];
  if (graph.is_graph_output(y) || captured.count(y->name)) return false;
  const std::vector<ir::Node*> readers = graph.consumers(y);
  std::vector<Columns> columns;
  for (const ir::Node* reader : readers) {
    const std::optional<Columns> c = last_axis_columns(*reader, y);
    if (!c) return false;
    columns.push_back(*c);
  }
  if (readers.empty()) return false;
  for (size_t i = 0; i < readers.size(); ++i) {
    const ir::Node& slice = *readers[i];
    const std::string name = graph.unique_name(p.name + "_cols" + std::to_string(columns[i].begin));
    std::vector<ir::Value*> inputs = p.inputs;
    inputs[1] = graph.add_constant(name + "_weights", columns_of(*p.inputs[1]->initializer, columns[i]));
    if (p.input(ops::kFusedBiasInput)) inputs[ops::kFusedBiasInput] = graph.add_constant(name + "_bias", columns_of(*p.inputs[ops::kFusedBiasInput]->initializer, columns[i]));
    ir::Value* out = slice.outputs[0];
    std::vector<std::string> origins = p.source_nodes();
    for (const std::string& origin : slice.source_nodes()) origins.push_back(origin);
    graph.remove_node(&slice);
    ir::Node* part = graph.add_node(p.op_type, inputs, {out}, name, p.domain, p.opset_version);
    part->attributes = p.attributes;
    part->origins = origins;
  }
  graph.remove_node(&p);
  return true;
}

}  // namespace

Result<bool> slice_products(ir::Graph& graph, const PassContext&) {
  const std::set<std::string> captured = names_captured_by_subgraphs(graph);
  std::vector<const ir::Node*> products;
  for (const auto& n : graph.nodes())
    if (sliceable_product(*n)) products.push_back(n.get());
  bool changed = false;
  for (const ir::Node* p : products) changed |= split(graph, *p, captured);
  return finish_rewrite(graph, changed);
}

}  // namespace kiln::passes
