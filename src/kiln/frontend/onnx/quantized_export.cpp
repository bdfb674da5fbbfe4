// Kiln's int8 products written as ONNX quantization operators (see quantized_export.h).
#include "kiln/frontend/onnx/quantized_export.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "kiln/frontend/onnx/onnx_names.h"
#include "kiln/frontend/onnx/tensor_proto.h"
#include "kiln/io/file.h"
#include "kiln/ops/numeric_precision.h"

namespace kiln::frontend {
namespace {

constexpr int64_t kDynamicQuantizeLinearOpset = 11;
constexpr int64_t kPerAxisDequantizeOpset = 13;  // DequantizeLinear's axis

const onnx::AttributeProto* find_attribute(const onnx::NodeProto& node, const std::string& name) {
  for (const auto& a : node.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

int64_t int_attribute(const onnx::NodeProto& node, const std::string& name, int64_t fallback) {
  const onnx::AttributeProto* a = find_attribute(node, name);
  return a ? a->i() : fallback;
}

float float_attribute(const onnx::NodeProto& node, const std::string& name, float fallback) {
  const onnx::AttributeProto* a = find_attribute(node, name);
  return a ? a->f() : fallback;
}

onnx::NodeProto make_node(const std::string& op, const std::string& name, std::vector<std::string> inputs,
                          std::vector<std::string> outputs) {
  onnx::NodeProto node;
  node.set_op_type(op);
  node.set_name(name);
  for (auto& i : inputs) node.add_input(std::move(i));
  for (auto& o : outputs) node.add_output(std::move(o));
  return node;
}

void add_int_attribute(onnx::NodeProto& node, const std::string& name, int64_t value) {
  onnx::AttributeProto* a = node.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(value);
}

// The names `node` reads, those its subgraphs read from enclosing scopes included.
void add_reads(const onnx::NodeProto& node, std::set<std::string>& read) {
  for (const std::string& input : node.input()) read.insert(input);
  for (const auto& a : node.attribute()) {
    if (a.has_g())
      for (const auto& n : a.g().node()) add_reads(n, read);
    for (const auto& g : a.graphs())
      for (const auto& n : g.node()) add_reads(n, read);
  }
}

// One product in ONNX Runtime's dynamic-quantization form: the nodes that replace it and the
// initializers they read.
struct Rewrite {
  std::vector<onnx::NodeProto> nodes;
  std::vector<onnx::TensorProto> initializers;
};

// The rewrite of `node` (MatMul or Gemm, known as `name`) whose B is `weights`, or why it cannot be
// written.
Result<Rewrite> rewrite_product(const onnx::NodeProto& node, const std::string& name, const Tensor& weights, int weight_levels,
                                const std::map<std::string, Tensor>& constants) {
  const bool gemm = node.op_type() == "Gemm";
  if (weights.dtype() != DType::kFloat || weights.shape().size() != 2)
    return invalid_argument("its weights are not a rank-2 float tensor");
  if (gemm && int_attribute(node, "transA", 0) != 0) return invalid_argument("Gemm with transA has no MatMulInteger form");
  const bool transposed = gemm && int_attribute(node, "transB", 0) != 0;
  const int64_t axis = transposed ? 0 : 1;  // the output columns
  std::vector<float> scales = ops::symmetric_int8_scales(weights, axis, weight_levels);
  const std::vector<int8_t> quantized = ops::quantize_symmetric_int8(weights, axis, scales);
  const int64_t k = weights.shape()[transposed ? 1 : 0], n = weights.shape()[transposed ? 0 : 1];
  Tensor wq = Tensor::allocate(DType::kInt8, {k, n});
  for (int64_t r = 0; r < k; ++r)
    for (int64_t c = 0; c < n; ++c) wq.data<int8_t>()[r * n + c] = quantized[static_cast<size_t>(transposed ? c * k + r : r * n + c)];
  const float alpha = gemm ? float_attribute(node, "alpha", 1.0f) : 1.0f;
  for (float& s : scales) s *= alpha;

  const std::string p = name + "_int8";
  Rewrite r;
  r.initializers.push_back(tensor_to_proto(wq));
  r.initializers.back().set_name(p + "_weight");
  r.initializers.push_back(tensor_to_proto(Tensor::from_vector(DType::kFloat, {n}, scales)));
  r.initializers.back().set_name(p + "_weight_scale");
  const std::string& a = node.input(0);
  r.nodes.push_back(make_node("DynamicQuantizeLinear", p + "_quantize_input", {a}, {p + "_input", p + "_input_scale", p + "_input_zero_point"}));
  r.nodes.push_back(make_node("MatMulInteger", p + "_matmul", {p + "_input", p + "_weight", p + "_input_zero_point"}, {p + "_accumulated"}));
  onnx::NodeProto cast = make_node("Cast", p + "_cast", {p + "_accumulated"}, {p + "_float"});
  add_int_attribute(cast, "to", onnx::TensorProto::FLOAT);
  r.nodes.push_back(std::move(cast));
  r.nodes.push_back(make_node("Mul", p + "_scales", {p + "_input_scale", p + "_weight_scale"}, {p + "_scale"}));
  const bool bias = gemm && node.input_size() > 2 && !node.input(2).empty();
  const std::string scaled = bias ? p + "_product" : node.output(0);
  r.nodes.push_back(make_node("Mul", p + "_scale_product", {p + "_float", p + "_scale"}, {scaled}));
  if (bias) {
    std::string c = node.input(2);
    const float beta = float_attribute(node, "beta", 1.0f);
    if (beta != 1.0f) {
      const auto constant = constants.find(c);
      if (constant == constants.end() || constant->second.dtype() != DType::kFloat) return invalid_argument("its C is not a float initializer while beta != 1");
      Tensor scaled_c = Tensor::allocate(DType::kFloat, constant->second.shape());
      for (int64_t i = 0; i < scaled_c.element_count(); ++i) scaled_c.data<float>()[i] = beta * constant->second.data<float>()[i];
      r.initializers.push_back(tensor_to_proto(scaled_c));
      c = p + "_bias";
      r.initializers.back().set_name(c);
    }
    r.nodes.push_back(make_node("Add", p + "_bias_add", {scaled, c}, {node.output(0)}));
  }
  return r;
}

// An input in one quantization: its name, scale (0: dynamic) and zero point.
using QuantizedInput = std::tuple<std::string, float, int32_t>;

// The name of `a` dequantized from uint8 in (scale, zero point): QuantizeLinear then
// DequantizeLinear, or with scale 0 (quantized per run) DynamicQuantizeLinear's outputs, the nodes
// (named from `prefix`) added to `r`, unless `dequantized` (each input and quantization so far)
// has them already.
std::string dequantized_input(const std::string& a, float scale, int32_t zero_point, const std::string& prefix,
                              std::map<QuantizedInput, std::string>& dequantized, Rewrite& r) {
  const auto [input, first] = dequantized.try_emplace({a, scale, zero_point}, prefix + "_float");
  if (!first) return input->second;
  if (scale > 0) {
    r.initializers.push_back(tensor_to_proto(Tensor::from_vector(DType::kFloat, {}, std::vector<float>{scale})));
    r.initializers.back().set_name(prefix + "_scale");
    Tensor zero = Tensor::allocate(DType::kUInt8, {});
    zero.data<uint8_t>()[0] = static_cast<uint8_t>(zero_point);
    r.initializers.push_back(tensor_to_proto(zero));
    r.initializers.back().set_name(prefix + "_zero_point");
    r.nodes.push_back(make_node("QuantizeLinear", prefix + "_quantize", {a, prefix + "_scale", prefix + "_zero_point"}, {prefix + "_uint8"}));
  } else {
    r.nodes.push_back(make_node("DynamicQuantizeLinear", prefix + "_quantize", {a}, {prefix + "_uint8", prefix + "_scale", prefix + "_zero_point"}));
  }
  r.nodes.push_back(
      make_node("DequantizeLinear", prefix + "_dequantize", {prefix + "_uint8", prefix + "_scale", prefix + "_zero_point"}, {prefix + "_float"}));
  return input->second;
}

// The QDQ rewrite of `node` (Conv, MatMul or Gemm, known as `name`) whose weights are `weights`:
// its input dequantized from uint8 (QuantizeLinear with the calibrated scale and zero point, or
// DynamicQuantizeLinear's run-time ones) and its weights from Kiln's int8 weights with their
// per-channel scales; the node itself, and its other inputs, as they were. An input several
// products read in one quantization is quantized once, by the first of them (`dequantized`: the
// dequantized name of each input and quantization so far), as Kiln quantizes it once where it keeps
// it uint8 between products; ONNX Runtime then finds the one QuantizeLinear after the writer that
// its int8 kernels need.
Result<Rewrite> qdq_rewrite(const onnx::NodeProto& node, const std::string& name, const Tensor& weights, const Int8Product& product,
                            const std::map<std::string, Tensor>& constants, int64_t opset,
                            std::map<QuantizedInput, std::string>& dequantized) {
  if (weights.dtype() != DType::kFloat) return invalid_argument("its weights are not a float tensor");
  const bool conv = node.op_type() == "Conv";
  if (!conv && weights.shape().size() != 2) return invalid_argument("its weights are not a rank-2 float tensor");
  const int64_t axis = conv ? 0 : node.op_type() == "Gemm" && int_attribute(node, "transB", 0) != 0 ? 0 : 1;
  const std::vector<float> scales = ops::symmetric_int8_scales(weights, axis, product.weight_levels);
  const std::vector<int8_t> quantized = ops::quantize_symmetric_int8(weights, axis, scales);
  Tensor wq = Tensor::allocate(DType::kInt8, weights.shape());
  std::copy(quantized.begin(), quantized.end(), wq.data<int8_t>());

  const std::string p = name + "_int8";
  Rewrite r;
  const auto add = [&](const Tensor& t, const std::string& tensor_name) {
    r.initializers.push_back(tensor_to_proto(t));
    r.initializers.back().set_name(tensor_name);
  };
  add(wq, p + "_weight");
  // Per-channel scales: DequantizeLinear's axis (opset 13); before it, a dequantization by 1 then a
  // Mul by the scales shaped to broadcast along the channel axis (the same float products).
  const bool per_axis = opset >= kPerAxisDequantizeOpset;
  std::vector<int64_t> scale_shape(per_axis ? 1 : weights.shape().size() - static_cast<size_t>(axis), 1);
  scale_shape[0] = static_cast<int64_t>(scales.size());
  add(Tensor::from_vector(DType::kFloat, scale_shape, scales), p + "_weight_scale");
  if (!per_axis) add(Tensor::from_vector(DType::kFloat, {}, std::vector<float>{1.0f}), p + "_one");
  const std::string input = dequantized_input(node.input(0), product.input_scale, product.input_zero_point, p + "_input", dequantized, r);
  if (per_axis) {
    onnx::NodeProto weight = make_node("DequantizeLinear", p + "_dequantize_weight", {p + "_weight", p + "_weight_scale"}, {p + "_weight_float"});
    add_int_attribute(weight, "axis", axis);
    r.nodes.push_back(std::move(weight));
  } else {
    r.nodes.push_back(make_node("DequantizeLinear", p + "_dequantize_weight", {p + "_weight", p + "_one"}, {p + "_weight_levels"}));
    r.nodes.push_back(make_node("Mul", p + "_scale_weight", {p + "_weight_levels", p + "_weight_scale"}, {p + "_weight_float"}));
  }
  onnx::NodeProto product_node = node;
  product_node.set_input(0, input);
  product_node.set_input(1, p + "_weight_float");
  // A calibrated product's bias (Conv's B, Gemm's C of one value per column, beta 1) in int32 at the
  // accumulator's scale (input scale x weight scale per channel), as ONNX Runtime's int8 kernels
  // (QLinearConv, QGemm) add it: the float bias moves by at most half a step of that scale.
  const size_t bias_input = 2;
  const auto bias = node.input_size() > static_cast<int>(bias_input) ? constants.find(node.input(bias_input)) : constants.end();
  if (per_axis && product.input_scale > 0 && node.op_type() != "MatMul" && bias != constants.end() &&
      bias->second.dtype() == DType::kFloat && bias->second.shape().size() == 1 &&
      bias->second.element_count() == static_cast<int64_t>(scales.size()) && float_attribute(node, "beta", 1.0f) == 1.0f) {
    std::vector<float> bias_scales(scales.size());
    Tensor bq = Tensor::allocate(DType::kInt32, {static_cast<int64_t>(scales.size())});
    for (size_t n = 0; n < scales.size(); ++n) {
      bias_scales[n] = product.input_scale * scales[n];
      const double levels = std::nearbyint(static_cast<double>(bias->second.data<float>()[n]) / bias_scales[n]);
      bq.data<int32_t>()[n] = static_cast<int32_t>(std::clamp(levels, double{INT32_MIN}, double{INT32_MAX}));
    }
    add(bq, p + "_bias");
    add(Tensor::from_vector(DType::kFloat, {static_cast<int64_t>(scales.size())}, bias_scales), p + "_bias_scale");
    onnx::NodeProto dequantize = make_node("DequantizeLinear", p + "_dequantize_bias", {p + "_bias", p + "_bias_scale"}, {p + "_bias_float"});
    add_int_attribute(dequantize, "axis", 0);
    r.nodes.push_back(std::move(dequantize));
    product_node.set_input(static_cast<int>(bias_input), p + "_bias_float");
  }
  r.nodes.push_back(std::move(product_node));
  return r;
}

// For a product summing a residual Kiln keeps uint8: the rewrite of the Add among its sources
// (`product_name` the source product's) that reads the residual, the one input no other source
// node writes, dequantized from the residual's quantization. None when no such Add is found (the
// export then adds the float residual where Kiln adds the rounded one).
void add_residual_rewrite(const Int8Product& product, const std::string& product_name,
                          const std::map<std::string, const onnx::NodeProto*>& main_nodes,
                          const std::map<std::string, std::string>& producer, std::map<QuantizedInput, std::string>& dequantized,
                          std::map<std::string, Rewrite>& rewrites) {
  const std::set<std::string> sources(product.sources.begin(), product.sources.end());
  for (const std::string& source : product.sources) {
    const auto node = main_nodes.find(source);
    if (node == main_nodes.end() || node->second->op_type() != "Add" || node->second->input_size() != 2 || rewrites.count(source)) continue;
    int outside = -1, count = 0;
    for (int i = 0; i < 2; ++i) {
      const auto writer = producer.find(node->second->input(i));
      if (writer == producer.end() || !sources.count(writer->second)) {
        outside = i;
        ++count;
      }
    }
    if (count != 1) continue;
    Rewrite r;
    onnx::NodeProto sum = *node->second;
    sum.set_input(outside, dequantized_input(sum.input(outside), product.residual_scale, product.residual_zero_point,
                                             product_name + "_int8_residual", dequantized, r));
    r.nodes.push_back(std::move(sum));
    rewrites[source] = std::move(r);
    return;
  }
}

// A MaxPool whose output is quantized statically for a product reads its input quantized in the
// same scale and zero point: exact (the max of quantized values is the quantized max), and the
// pattern ONNX Runtime pools in uint8, its writer then a QLinearConv, as Kiln passes a uint8 value
// through a max pool (Provider::passes_reduced_activations). Through chains of them.
void add_max_pool_rewrites(const std::map<std::string, const onnx::NodeProto*>& main_nodes,
                           const std::map<std::string, std::string>& producer, std::map<QuantizedInput, std::string>& dequantized,
                           std::map<std::string, Rewrite>& rewrites) {
  std::vector<QuantizedInput> pending;
  for (const auto& [input, name] : dequantized) pending.push_back(input);
  while (!pending.empty()) {
    const auto [value, scale, zero_point] = pending.back();
    pending.pop_back();
    const auto writer = producer.find(value);
    const auto node = writer == producer.end() ? main_nodes.end() : main_nodes.find(writer->second);
    if (scale <= 0 || node == main_nodes.end() || node->second->op_type() != "MaxPool" || node->second->output_size() != 1 ||
        node->second->input_size() != 1 || rewrites.count(node->first))
      continue;
    Rewrite r;
    onnx::NodeProto pool = *node->second;
    pool.set_input(0, dequantized_input(pool.input(0), scale, zero_point, node->first + "_int8_input", dequantized, r));
    r.nodes.push_back(std::move(pool));
    rewrites[node->first] = std::move(r);
    pending.emplace_back(node->second->input(0), scale, zero_point);
  }
}

}  // namespace

Result<QuantizedOnnx> quantized_onnx(const std::string& path, const std::vector<Int8Product>& products) {
  KILN_ASSIGN_OR_RETURN(const std::string bytes, io::read_file(path));
  if (bytes.size() > static_cast<size_t>(INT_MAX)) return invalid_model(path + ": over 2 GiB; large weights must be external data");
  onnx::ModelProto model;
  if (!model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) return invalid_model(path + ": not an ONNX ModelProto");
  int64_t opset = 0;
  for (const auto& imported : model.opset_import())
    if (imported.domain().empty() || imported.domain() == "ai.onnx") opset = imported.version();
  if (opset < kDynamicQuantizeLinearOpset)
    return invalid_argument(path + " imports opset " + std::to_string(opset) + "; its int8 form needs DynamicQuantizeLinear (opset " +
                            std::to_string(kDynamicQuantizeLinearOpset) + ")");
  const std::string base_dir = io::parent_folder(path);
  onnx::GraphProto& graph = *model.mutable_graph();
  std::map<std::string, const onnx::TensorProto*> initializers;
  for (const auto& init : graph.initializer()) initializers[init.name()] = &init;
  std::map<std::string, const onnx::NodeProto*> main_nodes;  // by the name Kiln's import gives them
  std::map<std::string, int> position;                      // their places in the graph
  std::map<std::string, std::string> producer;              // the node writing each value, by name
  for (int i = 0; i < graph.node_size(); ++i) {
    main_nodes[node_name(graph.node(i), i)] = &graph.node(i);
    position[node_name(graph.node(i), i)] = i;
    for (const std::string& output : graph.node(i).output()) producer[output] = node_name(graph.node(i), i);
  }
  // The products in the order of their first source node, so that an input quantized once for
  // several products is quantized where the first of them reads it.
  const auto first_position = [&](const Int8Product& product) {
    int first = INT_MAX;
    for (const std::string& source : product.sources)
      if (const auto p = position.find(source); p != position.end()) first = std::min(first, p->second);
    return first;
  };
  std::vector<const Int8Product*> in_order;
  for (const Int8Product& product : products) in_order.push_back(&product);
  std::stable_sort(in_order.begin(), in_order.end(),
                   [&](const Int8Product* a, const Int8Product* b) { return first_position(*a) < first_position(*b); });

  QuantizedOnnx out;
  std::map<std::string, Rewrite> rewrites;  // by source node
  std::map<std::string, Tensor> constants;  // the initializers the rewritten products read
  std::map<QuantizedInput, std::string> dequantized;  // the QDQ inputs so far (qdq_rewrite)
  // The source Conv, MatMul or Gemm a product stands for (and its name), or why there is none.
  struct Source {
    const onnx::NodeProto* node = nullptr;
    std::string name, why;
  };
  const auto source_of = [&](const Int8Product& product) {
    Source found;
    for (const std::string& source : product.sources) {
      const auto node = main_nodes.find(source);
      if (node == main_nodes.end()) found.why = "its source node '" + source + "' is not in the main graph (a control-flow body's)";
      else if (node->second->op_type() == "MatMul" || node->second->op_type() == "Gemm" || node->second->op_type() == "Conv") {
        found.node = node->second;
        found.name = source;
      }
    }
    if (!found.node && found.why.empty()) found.why = "no Conv, MatMul or Gemm among its source nodes";
    return found;
  };
  std::map<std::string, int> products_per_source;
  for (const Int8Product& product : products) ++products_per_source[source_of(product).name];
  for (const Int8Product* in_graph_order : in_order) {
    const Int8Product& product = *in_graph_order;
    const Source source = source_of(product);
    const onnx::NodeProto* source_product = source.node;
    const std::string& name = source.name;
    std::string why = source.why;
    // Kiln splits a product that reads a Concat into one per input (passes/concat_split), each with
    // its own input and weight scales: one ONNX node holds neither.
    if (source_product && why.empty() && products_per_source[name] > 1)
      why = "Kiln computes its source node '" + name + "' as " + std::to_string(products_per_source[name]) +
            " products (one per input of the Concat it reads, each quantized on its own), which one node cannot hold";
    if (source_product && why.empty()) {
      const auto weights = source_product->input_size() >= 2 ? initializers.find(source_product->input(1)) : initializers.end();
      if (weights == initializers.end()) why = "its weights are not an initializer of the main graph";
    }
    Result<Rewrite> rewrite = invalid_argument(why);
    // Dynamic matrix products take ONNX Runtime's MatMulInteger form; the rest the QDQ form.
    const bool matmul_integer = why.empty() && product.input_scale <= 0 && source_product->op_type() != "Conv";
    if (why.empty()) {
      for (int i = 1; i < source_product->input_size(); ++i) {
        const auto init = initializers.find(source_product->input(i));
        if (init != initializers.end() && !constants.count(init->first)) {
          KILN_ASSIGN_OR_RETURN(constants[init->first], tensor_from_proto(*init->second, base_dir));
        }
      }
      const Tensor& weights = constants.at(source_product->input(1));
      rewrite = matmul_integer ? rewrite_product(*source_product, name, weights, product.weight_levels, constants)
                               : qdq_rewrite(*source_product, name, weights, product, constants, opset, dequantized);
    }
    if (!rewrite.is_ok()) {
      out.left_fp32.push_back(product.node + ": " + rewrite.status().message());
      continue;
    }
    rewrites[name] = std::move(rewrite).value();
    out.quantized.push_back({name, matmul_integer ? QuantizedOnnx::Form::kMatMulInteger : QuantizedOnnx::Form::kQdq});
    if (product.residual_scale > 0) add_residual_rewrite(product, name, main_nodes, producer, dequantized, rewrites);
  }
  add_max_pool_rewrites(main_nodes, producer, dequantized, rewrites);
  google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
  std::vector<onnx::TensorProto> added;
  for (int i = 0; i < graph.node_size(); ++i) {
    const onnx::NodeProto& node = graph.node(i);
    const auto rewrite = rewrites.find(node_name(node, i));
    if (rewrite == rewrites.end()) {
      *nodes.Add() = node;
      continue;
    }
    for (onnx::NodeProto& n : rewrite->second.nodes) *nodes.Add() = std::move(n);
    for (onnx::TensorProto& t : rewrite->second.initializers) added.push_back(std::move(t));
  }
  // The float weights the rewritten products no longer read, unless another node does.
  std::set<std::string> read;
  for (const onnx::NodeProto& node : nodes) add_reads(node, read);
  for (const auto& output : graph.output()) read.insert(output.name());
  *graph.mutable_node() = std::move(nodes);
  auto* inits = graph.mutable_initializer();
  inits->erase(std::remove_if(inits->begin(), inits->end(),
                              [&](const onnx::TensorProto& t) { return constants.count(t.name()) && !read.count(t.name()); }),
               inits->end());
  for (onnx::TensorProto& t : added) *inits->Add() = std::move(t);
  model.SerializeToString(&out.model);
  return out;
}

}  // namespace kiln::frontend
