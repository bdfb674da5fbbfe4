// concat_split: Conv over a channel Concat -> a sum of Convs, one per concatenated input.
#include "kiln/passes/concat_split.h"

#include <cstring>
#include <set>

#include "kiln/passes/rewrite_helpers.h"

namespace kiln::passes {
namespace {

const std::set<std::string> kChannelwisePools = {"MaxPool", "AveragePool"};

// The channel counts of the inputs of a Concat along axis 1, or empty when the node is not such a
// Concat (any rank >= 3, static channel dims) or its output is read by anything but `reader`.
std::vector<int64_t> channel_concat_parts(const ir::Graph& graph, const ir::Value* v, const ir::Node& reader,
                                          const std::set<std::string>& captured) {
  const ir::Node* concat = v ? v->producer : nullptr;
  if (!concat || !is_onnx_op(*concat, "Concat") || concat->inputs.size() < 2) return {};
  if (graph.is_graph_output(v) || captured.count(v->name) || graph.consumers(v) != std::vector<ir::Node*>{const_cast<ir::Node*>(&reader)})
    return {};
  if (!v->type.shape || v->type.shape->rank() < 3) return {};
  const int64_t rank = static_cast<int64_t>(v->type.shape->rank());
  const int64_t axis = concat->attr_int("axis", 1);
  if (axis != 1 && axis != 1 - rank) return {};
  std::vector<int64_t> parts;
  for (const ir::Value* in : concat->inputs) {
    if (!in || !in->type.shape || in->type.shape->rank() != v->type.shape->rank() || !(*in->type.shape)[1].is_static())
      return {};
    parts.push_back((*in->type.shape)[1].value());
  }
  return parts;
}

// `type` with its channel dim set to `channels`.
ir::TensorType with_channels(ir::TensorType type, int64_t channels) {
  std::vector<ir::Dim> dims = type.shape->dims();
  dims[1] = ir::Dim(channels);
  type.shape = ir::Shape(std::move(dims));
  return type;
}

// MaxPool/AveragePool(Concat(A1..An)) -> Concat(Pool(A1)..Pool(An)): pools work channel by channel.
bool sink_pool(ir::Graph& graph, ir::Node& pool, const std::set<std::string>& captured) {
  if (!pool.domain.empty() || !kChannelwisePools.count(pool.op_type) || pool.outputs.size() != 1) return false;
  ir::Value* y = pool.outputs[0];
  const std::vector<int64_t> parts = channel_concat_parts(graph, pool.input(0), pool, captured);
  if (parts.empty() || !y->type.shape) return false;
  ir::Node* concat = pool.inputs[0]->producer;
  std::vector<ir::Value*> pooled;
  for (size_t i = 0; i < parts.size(); ++i) {
    ir::Value* part = graph.add_value(graph.unique_name(y->name + "_part" + std::to_string(i)), with_channels(y->type, parts[i]));
    ir::Node* copy = graph.add_node(pool.op_type, {concat->inputs[i]}, {part}, graph.unique_name(pool.name + "_part"),
                                    pool.domain, pool.opset_version);
    copy->attributes = pool.attributes;
    copy->origins = pool.source_nodes();
    pooled.push_back(part);
  }
  ir::Node* joined = graph.add_node("Concat", pooled, {}, concat->name, "", concat->opset_version);
  joined->attributes = concat->attributes;
  joined->origins = concat->source_nodes();
  graph.remove_node(&pool);
  graph.remove_node(concat);
  joined->outputs = {y};
  y->producer = joined;
  return true;
}

// W[:, first:first+count] of a [M, C, k...] weight tensor.
Tensor input_channel_slice(const Tensor& w, int64_t first, int64_t count) {
  std::vector<int64_t> shape = w.shape();
  const int64_t m = shape[0], c = shape[1], kernel = w.element_count() / (m * c);
  shape[1] = count;
  Tensor out = Tensor::allocate(DType::kFloat, shape);
  for (int64_t o = 0; o < m; ++o)
    std::memcpy(out.data<float>() + o * count * kernel, w.data<float>() + (o * c + first) * kernel,
                static_cast<size_t>(count * kernel) * sizeof(float));
  return out;
}

// Conv(Concat(A1..An), W, b) -> Conv(A1, W1, b) + Conv(A2, W2) + ... + Conv(An, Wn).
bool split_conv(ir::Graph& graph, ir::Node& conv, const std::set<std::string>& captured) {
  if (!is_onnx_op(conv, "Conv") || conv.outputs.size() != 1 || conv.attr_int("group", 1) != 1) return false;
  const ir::Value* weights = conv.input(1);
  if (!weights || !weights->initializer || weights->initializer->dtype() != DType::kFloat || weights->initializer->rank() < 3)
    return false;
  const std::vector<int64_t> parts = channel_concat_parts(graph, conv.input(0), conv, captured);
  const Tensor& w = *weights->initializer;
  int64_t total = 0;
  for (int64_t p : parts) total += p;
  if (parts.empty() || total != w.shape()[1]) return false;
  ir::Node* concat = conv.inputs[0]->producer;
  ir::Value* y = conv.outputs[0];
  ir::Value* sum = nullptr;
  int64_t first = 0;
  for (size_t i = 0; i < parts.size(); ++i) {
    ir::Value* w_part = graph.add_constant(graph.unique_name(weights->name + "_part" + std::to_string(i)),
                                           input_channel_slice(w, first, parts[i]));
    first += parts[i];
    std::vector<ir::Value*> inputs = {concat->inputs[i], w_part};
    if (i == 0 && conv.input(2)) inputs.push_back(conv.inputs[2]);
    ir::Value* part = graph.add_value(graph.unique_name(y->name + "_part" + std::to_string(i)), y->type);
    ir::Node* piece = graph.add_node("Conv", inputs, {part}, graph.unique_name(conv.name + "_part"), "", conv.opset_version);
    piece->attributes = conv.attributes;
    piece->origins = conv.source_nodes();
    piece->origins.push_back(concat->name);
    if (sum) {
      const bool last = i + 1 == parts.size();
      ir::Value* next = last ? y : graph.add_value(graph.unique_name(y->name + "_sum"), y->type);
      graph.add_node("Add", {sum, part}, {next}, graph.unique_name(conv.name + "_sum"), "", 14)->origins = conv.source_nodes();
      part = next;
    }
    sum = part;
  }
  graph.remove_node(&conv);
  graph.remove_node(concat);
  return true;
}

}  // namespace

Result<bool> split_concat_convolutions(ir::Graph& graph, const PassContext&) {
  const std::set<std::string> captured = names_captured_by_subgraphs(graph);
  std::vector<ir::Node*> nodes;
  for (const auto& n : graph.nodes()) nodes.push_back(n.get());
  bool changed = false;
  std::set<const ir::Node*> removed;  // concats and readers a rewrite replaced
  for (ir::Node* node : nodes) {
    if (removed.count(node) || !node->input(0) || removed.count(node->input(0)->producer)) continue;
    const ir::Node* concat = node->input(0)->producer;
    if (sink_pool(graph, *node, captured) || split_conv(graph, *node, captured)) {
      removed.insert({node, concat});
      changed = true;
    }
  }
  return finish_rewrite(graph, changed);
}

}  // namespace kiln::passes
