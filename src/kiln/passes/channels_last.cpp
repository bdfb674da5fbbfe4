// channels_last: convolution regions to NHWC with transposes only at their boundaries.
#include "kiln/passes/channels_last.h"

#include <map>
#include <set>

#include "kiln/ops/activation.h"
#include "kiln/ops/channels_last.h"
#include "kiln/passes/rewrite_helpers.h"

namespace kiln::passes {
namespace {

const std::set<std::string> kPools = {"MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool"};
const std::set<std::string> kElementwiseBinary = {"Add", "Sub", "Mul", "Div", "Max", "Min"};

// A float activation of rank 4 (dims may be symbolic: a dynamic batch converts too).
bool is_float_4d(const ir::Value* v) {
  return v && v->type.is_tensor() && v->type.dtype == DType::kFloat && v->type.shape && v->type.shape->rank() == 4;
}

bool is_scalar_constant(const ir::Value* v) { return v && v->initializer && v->initializer->element_count() == 1; }

class Converter {
 public:
  Converter(ir::Graph& graph, std::set<std::string> captured) : graph_(graph), captured_(std::move(captured)) {}

  // Converts every region; returns whether any node changed.
  Result<bool> run() {
    std::vector<ir::Node*> order;
    for (const auto& n : graph_.nodes()) order.push_back(n.get());
    for (ir::Node* node : order) {
      if (!starts_region(*node) && !(joins_region(*node) && any_input_converted(*node))) continue;
      convert(*node);
      converted_.push_back(node);
    }
    if (converted_.empty()) return false;
    for (const ir::Node* node : converted_) graph_.remove_node(node);
    graph_.remove_unused_values();
    KILN_RETURN_IF_ERROR(graph_.topological_sort());
    return true;
  }

 private:
  // Convolutions and pools on 4-d float tensors start (or extend) a region.
  bool starts_region(const ir::Node& n) const {
    if (n.has_subgraph() || !is_float_4d(n.input(0)) || !is_float_4d(n.outputs[0])) return false;
    if (is_onnx_op(n, "Conv")) return true;
    if (n.domain == "kiln" && n.op_type == "FusedConv") return n.attr_string("layout", "NCHW") == "NCHW";
    if (!n.domain.empty() || !kPools.count(n.op_type)) return false;
    return n.outputs.size() == 1 || !n.outputs[1];  // MaxPool's Indices are channels-first
  }

  // Layout-agnostic ops join a region when one of their inputs is already in it.
  bool joins_region(const ir::Node& n) const {
    if (!n.domain.empty() || n.outputs.size() != 1 || !is_float_4d(n.outputs[0]) || n.has_subgraph()) return false;
    if (ops::activation_of(n)) return true;
    if (kElementwiseBinary.count(n.op_type) && n.inputs.size() == 2) {
      for (const ir::Value* in : n.inputs)
        if (!(is_scalar_constant(in) || (in && in->type == n.outputs[0]->type))) return false;
      return n.opset_version >= 7;  // no legacy broadcast attribute
    }
    return n.op_type == "Concat";
  }

  bool any_input_converted(const ir::Node& n) const {
    for (const ir::Value* in : n.inputs)
      if (in && twin_.count(in)) return true;
    return false;
  }

  // The channels-last form of a 4-d value: its twin, else a Transpose made once.
  ir::Value* channels_last_of(ir::Value* v) {
    if (!is_float_4d(v)) return v;  // bias, weights, scalars, Clip bounds
    auto it = twin_.find(v);
    if (it != twin_.end()) return it->second;
    ir::Value* t = graph_.add_value(graph_.unique_name(v->name + "_nhwc"),
                                    ir::TensorType{v->type.dtype, ops::permuted(*v->type.shape, ops::to_channels_last(4))});
    graph_.add_node("Transpose", {v}, {t}, graph_.unique_name(v->name + "_to_nhwc"), "", 13)->attributes["perm"] =
        ir::Attribute::of_ints(ops::to_channels_last(4));
    twin_[v] = t;
    return t;
  }

  // Replaces `node` by its channels-last form writing a new value; the original output is then
  // produced by a Transpose back (removed later if nothing reads it).
  // Whether input i of a node being converted is an activation (the others, weights and bias, stay).
  static bool is_activation_input(const ir::Node& node, size_t i) {
    if (is_onnx_op(node, "Conv") || node.op_type == "FusedConv") return i == 0 || i == 3;
    if (kPools.count(node.op_type)) return i == 0;
    return true;
  }

  void convert(ir::Node& node) {
    std::vector<ir::Value*> inputs;
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      ir::Value* in = node.inputs[i];
      inputs.push_back(in && is_activation_input(node, i) ? channels_last_of(in) : in);
    }
    ir::Value* y = node.outputs[0];
    ir::Value* y_last = graph_.add_value(graph_.unique_name(y->name + "_nhwc"),
                                         ir::TensorType{y->type.dtype, ops::permuted(*y->type.shape, ops::to_channels_last(4))});
    ir::Node* twin_node = graph_.add_node(node.op_type, inputs, {y_last}, node.name, node.domain, node.opset_version);
    twin_node->attributes = node.attributes;
    twin_node->origins = node.source_nodes();
    if (is_onnx_op(node, "Conv") || node.op_type == "FusedConv") {
      twin_node->op_type = "FusedConv";
      twin_node->domain = "kiln";
      twin_node->opset_version = 1;
      twin_node->attributes["layout"] = ir::Attribute::of_string("NHWC");
    } else if (kPools.count(node.op_type) && node.domain.empty()) {
      twin_node->op_type = "ChannelsLast";
      twin_node->domain = "kiln";
      twin_node->opset_version = 1;
      twin_node->attributes["op"] = ir::Attribute::of_string(node.op_type);
      twin_node->attributes["op_version"] = ir::Attribute::of_int(node.opset_version);
    } else if (node.op_type == "Concat") {
      const int64_t axis = node.attr_int("axis", 1);
      twin_node->attributes["axis"] = ir::Attribute::of_int(ops::to_channels_first(4)[static_cast<size_t>((axis + 4) % 4)]);
    }
    twin_[y] = y_last;
    // The original output keeps its name and readers; node is removed after the walk.
    node.outputs[0] = graph_.add_value(graph_.unique_name(y->name + "_replaced"), y->type);
    node.outputs[0]->producer = &node;
    graph_.add_node("Transpose", {y_last}, {y}, graph_.unique_name(y->name + "_to_nchw"), "", 13)->attributes["perm"] =
        ir::Attribute::of_ints(ops::to_channels_first(4));
  }

  ir::Graph& graph_;
  std::set<std::string> captured_;
  std::map<const ir::Value*, ir::Value*> twin_;  // channels-first value -> its channels-last form
  std::vector<const ir::Node*> converted_;
};

}  // namespace

Result<bool> convert_to_channels_last(ir::Graph& graph, const PassContext& ctx) {
  if (!ctx.channels_last) return false;
  return Converter(graph, names_captured_by_subgraphs(graph)).run();
}

}  // namespace kiln::passes
