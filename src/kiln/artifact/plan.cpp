// Encoding the optimised graph (with its control-flow bodies) as the FlatBuffers plan, and
// decoding it with every index checked.
#include "kiln/artifact/plan.h"

#include <flatbuffers/flatbuffers.h>

#include "kiln/artifact/plan_generated.h"

namespace kiln::artifact {
namespace {

namespace fbs = kiln::artifact::fb;
using flatbuffers::FlatBufferBuilder;
using flatbuffers::Offset;

Status unsupported(const std::string& what) {
  return unsupported_operator("artifact: " + what + " cannot be stored in this format version");
}

// Nesting deeper than this is refused both ways (a hostile plan cannot exhaust the stack).
constexpr int kMaxGraphDepth = 32;

// The main graph's constants refer to the weights (`weight_index`); a subgraph's (null index)
// carry their bytes.
Result<Offset<fbs::Value>> encode_value(FlatBufferBuilder& b, const ir::Value& v, const std::map<std::string, int>* weight_index) {
  if (!v.type.is_tensor()) return unsupported("value '" + v.name + "' (a sequence or optional)");
  std::vector<Offset<fbs::Dim>> dims;
  if (v.type.shape)
    for (const ir::Dim& d : v.type.shape->dims())
      dims.push_back(fbs::CreateDim(b, d.is_static() ? d.value() : -1, d.is_symbol() ? b.CreateString(d.symbol_name()) : 0));
  if (v.initializer && !weight_index) {
    if (v.initializer->dtype() == DType::kString) return unsupported("the string constant '" + v.name + "' of a subgraph");
    const auto* data = static_cast<const uint8_t*>(v.initializer->raw_data());
    std::vector<Offset<fbs::Dim>> exact;
    for (int64_t d : v.initializer->shape()) exact.push_back(fbs::CreateDim(b, d, 0));
    return fbs::CreateValue(b, b.CreateString(v.name), static_cast<int32_t>(v.initializer->dtype()), true, b.CreateVector(exact),
                            -1, b.CreateVector(data, v.initializer->byte_size()));
  }
  int weight = -1;
  if (v.initializer) {
    const auto found = weight_index->find(v.name);
    if (found == weight_index->end()) return internal_error("artifact: constant '" + v.name + "' has no weight entry");
    weight = found->second;
  }
  return fbs::CreateValue(b, b.CreateString(v.name), static_cast<int32_t>(v.type.dtype), v.type.shape.has_value(),
                          b.CreateVector(dims), weight);
}

Result<Offset<fbs::Graph>> encode_subgraph(FlatBufferBuilder& b, const ir::Graph& g, int depth);

Result<Offset<fbs::Attribute>> encode_attribute(FlatBufferBuilder& b, const std::string& name, const ir::Attribute& a,
                                                const ir::Node& node, int depth) {
  using K = ir::Attribute::Kind;
  const auto where = [&] { return "attribute '" + name + "' of " + node.describe(); };
  switch (a.kind) {
    case K::kInt: return fbs::CreateAttribute(b, b.CreateString(name), fbs::AttributeKind_Int, a.i);
    case K::kFloat: return fbs::CreateAttribute(b, b.CreateString(name), fbs::AttributeKind_Float, 0, a.f);
    case K::kString:
      return fbs::CreateAttribute(b, b.CreateString(name), fbs::AttributeKind_String, 0, 0, b.CreateString(a.s));
    case K::kInts:
      return fbs::CreateAttribute(b, b.CreateString(name), fbs::AttributeKind_Ints, 0, 0, 0, b.CreateVector(a.ints));
    case K::kFloats:
      return fbs::CreateAttribute(b, b.CreateString(name), fbs::AttributeKind_Floats, 0, 0, 0, 0, b.CreateVector(a.floats));
    case K::kStrings:
      return fbs::CreateAttribute(b, b.CreateString(name), fbs::AttributeKind_Strings, 0, 0, 0, 0, 0,
                                  b.CreateVectorOfStrings(a.strings));
    case K::kTensor: {
      if (a.t.dtype() == DType::kString) return unsupported("the string tensor " + where());
      const auto* data = static_cast<const uint8_t*>(a.t.raw_data());
      return fbs::CreateAttribute(b, b.CreateString(name), fbs::AttributeKind_Tensor, 0, 0, 0, 0, 0, 0,
                                  static_cast<int32_t>(a.t.dtype()), b.CreateVector(a.t.shape()),
                                  b.CreateVector(data, a.t.byte_size()));
    }
    case K::kGraph: {
      KILN_ASSIGN_OR_RETURN(Offset<fbs::Graph> graph, encode_subgraph(b, *a.g, depth + 1));
      return fbs::CreateAttribute(b, b.CreateString(name), fbs::AttributeKind_Graph, 0, 0, 0, 0, 0, 0, 0, 0, 0, graph);
    }
    default: return unsupported("the " + std::string(ir::attribute_kind_name(a.kind)) + " " + where());
  }
}

Result<Offset<fbs::Node>> encode_node(FlatBufferBuilder& b, const ir::Node& n, const std::map<const ir::Value*, int>& ids,
                                      int depth) {
  const auto indices = [&](const std::vector<ir::Value*>& values) {
    std::vector<int32_t> out;
    for (const ir::Value* v : values) out.push_back(v ? ids.at(v) : -1);
    return out;
  };
  std::vector<Offset<fbs::Attribute>> attributes;
  for (const auto& [name, a] : n.attributes) {
    KILN_ASSIGN_OR_RETURN(Offset<fbs::Attribute> encoded, encode_attribute(b, name, a, n, depth));
    attributes.push_back(encoded);
  }
  return fbs::CreateNode(b, b.CreateString(n.name), b.CreateString(n.op_type), b.CreateString(n.domain), n.opset_version,
                         b.CreateVector(indices(n.inputs)), b.CreateVector(indices(n.outputs)), b.CreateVector(attributes),
                         b.CreateVectorOfStrings(n.origins));
}

// A graph's values, nodes, inputs and outputs, by index into its own value list.
struct EncodedGraph {
  Offset<flatbuffers::Vector<Offset<fbs::Value>>> values;
  Offset<flatbuffers::Vector<Offset<fbs::Node>>> nodes;
  Offset<flatbuffers::Vector<int32_t>> inputs, outputs;
};

Result<EncodedGraph> encode_graph(FlatBufferBuilder& b, const ir::Graph& g, const std::map<std::string, int>* weight_index,
                                  int depth) {
  if (depth > kMaxGraphDepth) return unsupported("subgraphs nested deeper than " + std::to_string(kMaxGraphDepth) + " levels");
  std::map<const ir::Value*, int> ids;
  std::vector<Offset<fbs::Value>> values;
  for (const auto& v : g.values()) {
    KILN_ASSIGN_OR_RETURN(Offset<fbs::Value> encoded, encode_value(b, *v, weight_index));
    ids[v.get()] = static_cast<int>(values.size());
    values.push_back(encoded);
  }
  std::vector<Offset<fbs::Node>> nodes;
  for (const auto& n : g.nodes()) {
    KILN_ASSIGN_OR_RETURN(Offset<fbs::Node> encoded, encode_node(b, *n, ids, depth));
    nodes.push_back(encoded);
  }
  std::vector<int32_t> inputs, outputs;
  for (const ir::Value* v : g.inputs) inputs.push_back(ids.at(v));
  for (const ir::Value* v : g.outputs) outputs.push_back(ids.at(v));
  return EncodedGraph{b.CreateVector(values), b.CreateVector(nodes), b.CreateVector(inputs), b.CreateVector(outputs)};
}

Result<Offset<fbs::Graph>> encode_subgraph(FlatBufferBuilder& b, const ir::Graph& g, int depth) {
  KILN_ASSIGN_OR_RETURN(const EncodedGraph encoded, encode_graph(b, g, nullptr, depth));
  return fbs::CreateGraph(b, b.CreateString(g.name()), encoded.values, encoded.nodes, encoded.inputs, encoded.outputs);
}

// ---- decoding ----

Status malformed(const std::string& what) { return integrity_failure("artifact plan: " + what); }

template <class T>
size_t length(const flatbuffers::Vector<T>* v) {
  return v ? v->size() : 0;
}

std::string text(const flatbuffers::String* s) { return s ? s->str() : std::string(); }

Result<ir::TensorType> decode_type(const fbs::Value& v) {
  if (!dtype_is_known(v.dtype())) return malformed("value '" + text(v.name()) + "' has an unknown dtype");
  ir::TensorType type(static_cast<DType>(v.dtype()));
  if (v.has_shape()) {
    std::vector<ir::Dim> dims;  // a shape without its dims list is a scalar's
    if (v.dims() == nullptr) return ir::TensorType(type.dtype, ir::Shape());
    for (const fbs::Dim* d : *v.dims()) {
      if (d->value() >= 0) dims.emplace_back(d->value());
      else if (d->symbol()) dims.push_back(ir::Dim::symbol(d->symbol()->str()));
      else dims.push_back(ir::Dim::unknown());
    }
    type.shape = ir::Shape(dims);
  }
  return type;
}

Status decode_graph(const flatbuffers::Vector<Offset<fbs::Value>>* values, const flatbuffers::Vector<Offset<fbs::Node>>* nodes,
                    const flatbuffers::Vector<int32_t>* inputs, const flatbuffers::Vector<int32_t>* outputs,
                    const std::vector<Tensor>* weights, int depth, ir::Graph& g);

Result<ir::Attribute> decode_attribute(const fbs::Attribute& a, const ir::Graph& enclosing, int depth) {
  switch (a.kind()) {
    case fbs::AttributeKind_Int: return ir::Attribute::of_int(a.i());
    case fbs::AttributeKind_Float: return ir::Attribute::of_float(a.f());
    case fbs::AttributeKind_String: return ir::Attribute::of_string(text(a.s()));
    case fbs::AttributeKind_Ints:
      return ir::Attribute::of_ints(a.ints() ? std::vector<int64_t>(a.ints()->begin(), a.ints()->end()) : std::vector<int64_t>{});
    case fbs::AttributeKind_Floats:
      return ir::Attribute::of_floats(a.floats() ? std::vector<float>(a.floats()->begin(), a.floats()->end()) : std::vector<float>{});
    case fbs::AttributeKind_Strings: {
      ir::Attribute out;
      out.kind = ir::Attribute::Kind::kStrings;
      for (size_t i = 0; i < length(a.strings()); ++i) out.strings.push_back(a.strings()->Get(i)->str());
      return out;
    }
    case fbs::AttributeKind_Tensor: {
      if (!dtype_is_known(a.tensor_dtype()) || a.tensor_dtype() == static_cast<int32_t>(DType::kString))
        return malformed("tensor attribute '" + text(a.name()) + "' has an unusable dtype");
      std::vector<int64_t> shape = a.tensor_shape() ? std::vector<int64_t>(a.tensor_shape()->begin(), a.tensor_shape()->end())
                                                    : std::vector<int64_t>{};
      for (int64_t d : shape)
        if (d < 0) return malformed("tensor attribute '" + text(a.name()) + "' has a negative dim");
      Tensor t = Tensor::allocate(static_cast<DType>(a.tensor_dtype()), shape);
      if (!t.defined() || length(a.tensor_data()) != t.byte_size())
        return malformed("tensor attribute '" + text(a.name()) + "' has the wrong number of bytes");
      std::copy(a.tensor_data()->begin(), a.tensor_data()->end(), static_cast<uint8_t*>(t.raw_data()));
      return ir::Attribute::of_tensor(std::move(t));
    }
    case fbs::AttributeKind_Graph: {
      const fbs::Graph* graph = a.graph();
      if (!graph) return malformed("graph attribute '" + text(a.name()) + "' holds no graph");
      if (depth >= kMaxGraphDepth) return malformed("subgraphs nested deeper than " + std::to_string(kMaxGraphDepth) + " levels");
      auto body = std::make_shared<ir::Graph>(text(graph->name()), &enclosing);
      KILN_RETURN_IF_ERROR(decode_graph(graph->values(), graph->nodes(), graph->inputs(), graph->outputs(), nullptr, depth + 1, *body)
                               .with_context("subgraph '" + text(graph->name()) + "'"));
      return ir::Attribute::of_graph(std::move(body));
    }
    default: return malformed("attribute '" + text(a.name()) + "' of unknown kind");
  }
}

// A subgraph constant's tensor from its inline bytes, which must fill its static shape exactly.
Result<Tensor> decode_inline_constant(const fbs::Value& v, const ir::TensorType& type) {
  if (!type.has_static_shape() || type.dtype == DType::kString)
    return malformed("constant '" + text(v.name()) + "' of a subgraph has no static shape");
  Tensor t = Tensor::allocate(type.dtype, type.shape->static_dims());
  if (!t.defined() || length(v.data()) != t.byte_size())
    return malformed("constant '" + text(v.name()) + "' of a subgraph has the wrong number of bytes");
  std::copy(v.data()->begin(), v.data()->end(), static_cast<uint8_t*>(t.raw_data()));
  return t;
}

// Fills `g` (empty) from a graph's tables, checking every index. The main graph's constants are
// `weights` (by index); a subgraph's (null `weights`) are inline.
Status decode_graph(const flatbuffers::Vector<Offset<fbs::Value>>* values_fb, const flatbuffers::Vector<Offset<fbs::Node>>* nodes,
                    const flatbuffers::Vector<int32_t>* inputs, const flatbuffers::Vector<int32_t>* outputs,
                    const std::vector<Tensor>* weights, int depth, ir::Graph& g) {
  std::vector<ir::Value*> values;
  for (size_t i = 0; i < length(values_fb); ++i) {
    const fbs::Value& v = *values_fb->Get(i);
    KILN_ASSIGN_OR_RETURN(ir::TensorType type, decode_type(v));
    if (g.find_value(text(v.name())) || text(v.name()).empty()) return malformed("value name '" + text(v.name()) + "' empty or repeated");
    ir::Value* value = nullptr;
    if (v.data()) {
      if (weights || v.weight() >= 0) return malformed("value '" + text(v.name()) + "' has inline bytes outside a subgraph");
      KILN_ASSIGN_OR_RETURN(Tensor constant, decode_inline_constant(v, type));
      value = g.add_constant(text(v.name()), std::move(constant));
    } else if (v.weight() >= 0) {
      if (!weights || v.weight() >= static_cast<int>(weights->size()))
        return malformed("value '" + text(v.name()) + "' refers to a missing weight");
      value = g.add_constant(text(v.name()), (*weights)[static_cast<size_t>(v.weight())]);
    } else {
      value = g.add_value(text(v.name()), type);
    }
    value->type = type;
    values.push_back(value);
  }
  const auto value_at = [&](int32_t index, bool allow_omitted) -> Result<ir::Value*> {
    if (index == -1 && allow_omitted) return static_cast<ir::Value*>(nullptr);
    if (index < 0 || static_cast<size_t>(index) >= values.size()) return malformed("a value index is out of range");
    return values[static_cast<size_t>(index)];
  };
  for (size_t i = 0; i < length(nodes); ++i) {
    const fbs::Node& n = *nodes->Get(i);
    std::vector<ir::Value*> ins, outs;
    for (size_t k = 0; k < length(n.inputs()); ++k) {
      KILN_ASSIGN_OR_RETURN(ir::Value* v, value_at(n.inputs()->Get(k), true));
      ins.push_back(v);
    }
    for (size_t k = 0; k < length(n.outputs()); ++k) {
      KILN_ASSIGN_OR_RETURN(ir::Value* v, value_at(n.outputs()->Get(k), true));
      if (v && v->producer) return malformed("value '" + v->name + "' is produced twice");
      outs.push_back(v);
    }
    ir::Node* node = g.add_node(text(n.op_type()), ins, outs, text(n.name()), text(n.domain()), n.opset_version());
    for (size_t k = 0; k < length(n.attributes()); ++k) {
      KILN_ASSIGN_OR_RETURN(ir::Attribute a, decode_attribute(*n.attributes()->Get(k), g, depth));
      node->attributes[text(n.attributes()->Get(k)->name())] = std::move(a);
    }
    for (size_t k = 0; k < length(n.origins()); ++k) node->origins.push_back(n.origins()->Get(k)->str());
  }
  for (size_t i = 0; i < length(inputs); ++i) {
    KILN_ASSIGN_OR_RETURN(ir::Value* v, value_at(inputs->Get(i), false));
    g.inputs.push_back(v);
  }
  for (size_t i = 0; i < length(outputs); ++i) {
    KILN_ASSIGN_OR_RETURN(ir::Value* v, value_at(outputs->Get(i), false));
    g.outputs.push_back(v);
  }
  return Status::ok();
}

}  // namespace

Result<std::string> encode_plan(const ir::Model& model, const std::map<std::string, int>& weight_index, const PlanPrecision& precision) {
  FlatBufferBuilder b;
  KILN_ASSIGN_OR_RETURN(const EncodedGraph graph, encode_graph(b, *model.graph, &weight_index, 0));
  std::vector<Offset<fbs::OpsetImport>> opsets;
  for (const auto& [domain, version] : model.opset_imports) opsets.push_back(fbs::CreateOpsetImport(b, b.CreateString(domain), version));
  b.Finish(fbs::CreatePlan(b, graph.values, graph.nodes, graph.inputs, graph.outputs, b.CreateVector(opsets), model.ir_version,
                           b.CreateString(precision.preference), b.CreateVectorOfStrings(precision.kept_fp32_sources),
                           b.CreateVectorOfStrings(precision.fallback_fp32_sources)));
  return std::string(reinterpret_cast<const char*>(b.GetBufferPointer()), b.GetSize());
}

Result<ir::Model> decode_plan(std::string_view bytes, const std::vector<Tensor>& weights, PlanPrecision& precision) {
  flatbuffers::Verifier::Options options;
  options.max_depth = 8 * kMaxGraphDepth;  // tables nest a few levels per subgraph
  flatbuffers::Verifier verifier(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), options);
  if (!fbs::VerifyPlanBuffer(verifier)) return malformed("not a valid FlatBuffers plan");
  const fbs::Plan& plan = *fbs::GetPlan(bytes.data());
  ir::Model model;
  model.graph = std::make_unique<ir::Graph>();
  KILN_RETURN_IF_ERROR(decode_graph(plan.values(), plan.nodes(), plan.inputs(), plan.outputs(), &weights, 0, *model.graph));
  for (size_t i = 0; i < length(plan.opset_imports()); ++i)
    model.opset_imports[text(plan.opset_imports()->Get(i)->domain())] = plan.opset_imports()->Get(i)->version();
  model.ir_version = plan.ir_version();
  precision.preference = text(plan.precision_preference());
  for (size_t i = 0; i < length(plan.kept_fp32_sources()); ++i) precision.kept_fp32_sources.push_back(plan.kept_fp32_sources()->Get(i)->str());
  for (size_t i = 0; i < length(plan.fallback_fp32_sources()); ++i)
    precision.fallback_fp32_sources.push_back(plan.fallback_fp32_sources()->Get(i)->str());
  return model;
}

}  // namespace kiln::artifact
