// Graph conversion in passes: constants and inputs, then every node output (ONNX files may list
// nodes out of order), then declared types, then nodes (subgraphs see all enclosing values), then
// outputs, and finally a topological sort.
#include "kiln/frontend/onnx/graph_builder.h"

#include "kiln/frontend/onnx/onnx_names.h"
#include "kiln/frontend/onnx/tensor_proto.h"

namespace kiln::frontend {

namespace {

const char* type_case_name(onnx::TypeProto::ValueCase c) {
  switch (c) {
    case onnx::TypeProto::kSequenceType: return "a sequence";
    case onnx::TypeProto::kMapType: return "a map";
    case onnx::TypeProto::kOptionalType: return "an optional";
    case onnx::TypeProto::kSparseTensorType: return "a sparse tensor";
    default: return "a non-tensor";
  }
}

Result<ir::Dim> dim_from_proto(const onnx::TensorShapeProto::Dimension& dim) {
  if (dim.has_dim_value()) return dim.dim_value() >= 0 ? ir::Dim(dim.dim_value()) : ir::Dim::unknown();
  if (dim.has_dim_param() && !dim.dim_param().empty()) return ir::Dim::symbol(dim.dim_param());
  return ir::Dim::unknown();
}

// The declared type of value `what`; an unset type is unknown. Tensors, sequences and optionals
// are supported; maps and sparse tensors are refused.
Result<ir::TensorType> type_from_proto(const onnx::TypeProto& type, const std::string& what) {
  if (type.value_case() == onnx::TypeProto::VALUE_NOT_SET) return ir::TensorType{};
  if (type.value_case() == onnx::TypeProto::kSequenceType) {
    KILN_ASSIGN_OR_RETURN(ir::TensorType element, type_from_proto(type.sequence_type().elem_type(), what));
    return ir::TensorType::sequence_of(std::move(element));
  }
  if (type.value_case() == onnx::TypeProto::kOptionalType) {
    KILN_ASSIGN_OR_RETURN(ir::TensorType element, type_from_proto(type.optional_type().elem_type(), what));
    return ir::TensorType::optional_of(std::move(element));
  }
  if (type.value_case() != onnx::TypeProto::kTensorType)
    return unsupported_operator(what + " has " + type_case_name(type.value_case()) +
                                " type; Kiln runs tensors, sequences and optionals");
  const auto& tensor = type.tensor_type();
  if (!dtype_is_known(tensor.elem_type()))
    return invalid_model(what + " has unknown element type " + std::to_string(tensor.elem_type()));
  ir::TensorType result{static_cast<DType>(tensor.elem_type()), std::nullopt};
  if (tensor.has_shape()) {
    ir::Shape shape;
    for (const auto& dim : tensor.shape().dim()) {
      KILN_ASSIGN_OR_RETURN(ir::Dim d, dim_from_proto(dim));
      shape.dims().push_back(d);
    }
    result.shape = std::move(shape);
  }
  return result;
}

// A Constant node's value as a tensor (value, value_float(s), value_int(s), value_string(s)).
Result<Tensor> constant_value(const onnx::NodeProto& node, const ImportContext& ctx) {
  for (const auto& attr : node.attribute()) {
    const std::string& key = attr.name();
    if (key == "value") return tensor_from_proto(attr.t(), ctx.base_dir);
    if (key == "value_float") return Tensor::from_vector(DType::kFloat, {}, std::vector<float>{attr.f()});
    if (key == "value_int") return Tensor::from_vector(DType::kInt64, {}, std::vector<int64_t>{attr.i()});
    if (key == "value_string") return Tensor::from_vector(DType::kString, {}, std::vector<std::string>{attr.s()});
    const int64_t n = std::max({attr.floats_size(), attr.ints_size(), attr.strings_size()});
    if (key == "value_floats")
      return Tensor::from_vector(DType::kFloat, {n}, std::vector<float>(attr.floats().begin(), attr.floats().end()));
    if (key == "value_ints")
      return Tensor::from_vector(DType::kInt64, {n}, std::vector<int64_t>(attr.ints().begin(), attr.ints().end()));
    if (key == "value_strings")
      return Tensor::from_vector(DType::kString, {n},
                                 std::vector<std::string>(attr.strings().begin(), attr.strings().end()));
    if (key == "sparse_value") return unsupported_operator("sparse constants (attribute 'sparse_value') are not supported");
  }
  return invalid_model("Constant has no value attribute");
}

// The attribute's kind; IR-1 files may leave `type` unset, so it is then read off the filled field.
onnx::AttributeProto::AttributeType attribute_type(const onnx::AttributeProto& a) {
  using A = onnx::AttributeProto;
  if (a.type() != A::UNDEFINED) return a.type();
  if (a.has_f()) return A::FLOAT;
  if (a.has_i()) return A::INT;
  if (a.has_s()) return A::STRING;
  if (a.has_t()) return A::TENSOR;
  if (a.has_g()) return A::GRAPH;
  if (a.floats_size()) return A::FLOATS;
  if (a.ints_size()) return A::INTS;
  if (a.strings_size()) return A::STRINGS;
  if (a.tensors_size()) return A::TENSORS;
  if (a.graphs_size()) return A::GRAPHS;
  return A::UNDEFINED;
}

Result<std::shared_ptr<ir::Graph>> convert_subgraph(const onnx::GraphProto& proto, const ImportContext& ctx,
                                                    const ir::Graph& owner) {
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<ir::Graph> g, convert_graph(proto, ctx, &owner));
  return std::shared_ptr<ir::Graph>(std::move(g));
}

Result<ir::Attribute> convert_attribute(const onnx::AttributeProto& a, const ImportContext& ctx,
                                        const ir::Graph& owner) {
  using A = onnx::AttributeProto;
  ir::Attribute out;
  switch (attribute_type(a)) {
    case A::FLOAT: return ir::Attribute::of_float(a.f());
    case A::INT: return ir::Attribute::of_int(a.i());
    case A::STRING: return ir::Attribute::of_string(a.s());
    case A::FLOATS: return ir::Attribute::of_floats({a.floats().begin(), a.floats().end()});
    case A::INTS: return ir::Attribute::of_ints({a.ints().begin(), a.ints().end()});
    case A::STRINGS:
      out.kind = ir::Attribute::Kind::kStrings;
      out.strings.assign(a.strings().begin(), a.strings().end());
      return out;
    case A::TENSOR: {
      KILN_ASSIGN_OR_RETURN(Tensor t, tensor_from_proto(a.t(), ctx.base_dir));
      return ir::Attribute::of_tensor(std::move(t));
    }
    case A::TENSORS:
      out.kind = ir::Attribute::Kind::kTensors;
      for (const auto& tp : a.tensors()) {
        KILN_ASSIGN_OR_RETURN(Tensor t, tensor_from_proto(tp, ctx.base_dir));
        out.tensors.push_back(std::move(t));
      }
      return out;
    case A::GRAPH: {
      KILN_ASSIGN_OR_RETURN(std::shared_ptr<ir::Graph> g, convert_subgraph(a.g(), ctx, owner));
      return ir::Attribute::of_graph(std::move(g));
    }
    case A::GRAPHS:
      out.kind = ir::Attribute::Kind::kGraphs;
      for (const auto& gp : a.graphs()) {
        KILN_ASSIGN_OR_RETURN(std::shared_ptr<ir::Graph> g, convert_subgraph(gp, ctx, owner));
        out.graphs.push_back(std::move(g));
      }
      return out;
    case A::TYPE_PROTO: {
      KILN_ASSIGN_OR_RETURN(ir::TensorType type, type_from_proto(a.tp(), "attribute '" + a.name() + "'"));
      return ir::Attribute::of_type(std::move(type));
    }
    case A::SPARSE_TENSOR:
    case A::SPARSE_TENSORS:
    case A::TYPE_PROTOS:
      return unsupported_operator("attribute '" + a.name() + "' has kind " + A::AttributeType_Name(a.type()) +
                                  ", which Kiln does not support");
    case A::UNDEFINED: break;
  }
  return invalid_model("attribute '" + a.name() + "' has no value");
}

bool is_constant_node(const onnx::NodeProto& node) {
  return node.op_type() == "Constant" && canonical_domain(node.domain()).empty();
}

// Builds one graph; the passes share the graph under construction.
class GraphBuilder {
 public:
  GraphBuilder(const onnx::GraphProto& proto, const ImportContext& ctx, const ir::Graph* parent)
      : proto_(proto), ctx_(ctx), graph_(std::make_unique<ir::Graph>(graph_name(proto, parent), parent)) {}

  Result<std::unique_ptr<ir::Graph>> build() {
    KILN_RETURN_IF_ERROR(add_initializers());
    KILN_RETURN_IF_ERROR(add_inputs());
    KILN_RETURN_IF_ERROR(add_constant_nodes());
    declare_node_outputs();
    KILN_RETURN_IF_ERROR(apply_value_info());
    KILN_RETURN_IF_ERROR(add_nodes());
    KILN_RETURN_IF_ERROR(add_outputs());
    KILN_RETURN_IF_ERROR(graph_->topological_sort());
    return std::move(graph_);
  }

 private:
  static std::string graph_name(const onnx::GraphProto& proto, const ir::Graph* parent) {
    if (!proto.name().empty()) return proto.name();
    return parent ? "subgraph" : "main";
  }

  std::string where(const std::string& what) const { return "graph '" + graph_->name() + "': " + what; }

  Status add_initializers() {
    if (proto_.sparse_initializer_size() > 0)
      return unsupported_operator(where("sparse initializer '" + proto_.sparse_initializer(0).values().name() +
                                        "' is not supported"));
    for (const auto& init : proto_.initializer()) {
      if (graph_->find_value(init.name())) return invalid_model(where("initializer '" + init.name() + "' is defined twice"));
      const auto taken = graph_->parent() ? ctx_.main_initializers.end() : ctx_.main_initializers.find(init.name());
      if (taken != ctx_.main_initializers.end()) {
        graph_->add_constant(init.name(), taken->second);
        continue;
      }
      KILN_ASSIGN_OR_RETURN(Tensor t, tensor_from_proto(init, ctx_.base_dir));
      graph_->add_constant(init.name(), std::move(t));
    }
    return Status::ok();
  }

  // IR-3 files list initializers among the inputs too: those stay constants, not inputs.
  Status add_inputs() {
    for (const auto& info : proto_.input()) {
      KILN_ASSIGN_OR_RETURN(ir::TensorType type, type_from_proto(info.type(), where("input '" + info.name() + "'")));
      ir::Value* existing = graph_->find_value(info.name());
      if (existing && existing->is_constant()) continue;
      if (existing) return invalid_model(where("input '" + info.name() + "' is listed twice"));
      graph_->inputs.push_back(graph_->add_value(info.name(), type));
    }
    return Status::ok();
  }

  Status add_constant_nodes() {
    for (int i = 0; i < proto_.node_size(); ++i) {
      const auto& node = proto_.node(i);
      if (!is_constant_node(node)) continue;
      const std::string label = "Constant '" + node_name(node, i) + "'";
      if (node.output_size() != 1 || node.output(0).empty())
        return invalid_model(where(label + " must have exactly one output"));
      Result<Tensor> value = constant_value(node, ctx_);
      if (!value.is_ok()) return value.status().with_context(where(label));
      if (graph_->find_value(node.output(0)))
        return invalid_model(where(label + " writes '" + node.output(0) + "', which is already defined"));
      graph_->add_constant(node.output(0), std::move(value).value());
    }
    return Status::ok();
  }

  void declare_node_outputs() {
    for (const auto& node : proto_.node()) {
      if (is_constant_node(node)) continue;
      for (const auto& name : node.output())
        if (!name.empty() && !graph_->find_value(name)) graph_->add_value(name);
    }
  }

  // Declared types of intermediate values.
  Status apply_value_info() {
    for (const auto& info : proto_.value_info()) {
      ir::Value* v = graph_->find_value(info.name());
      if (!v || v->is_constant()) continue;
      KILN_ASSIGN_OR_RETURN(v->type, type_from_proto(info.type(), where("value '" + info.name() + "'")));
    }
    return Status::ok();
  }

  // The local value for `name`: defined here, read from an enclosing graph (a local value with no
  // producer), or undefined (a dangling value that verify() reports).
  ir::Value* lookup(const std::string& name) {
    if (ir::Value* v = graph_->find_value(name)) return v;
    const ir::Graph* parent = graph_->parent();
    const ir::Value* outer = parent ? parent->find_value_in_scope(name) : nullptr;
    return graph_->add_value(name, outer ? outer->type : ir::TensorType{});
  }

  Status add_nodes() {
    for (int i = 0; i < proto_.node_size(); ++i) {
      const auto& node = proto_.node(i);
      if (is_constant_node(node)) continue;
      const std::string domain = canonical_domain(node.domain());
      auto opset = ctx_.opset_imports.find(domain);
      if (opset == ctx_.opset_imports.end())
        return unsupported_operator(where("node '" + node_name(node, i) + "' uses domain '" + domain +
                                          "', which the model does not import"));
      std::vector<ir::Value*> inputs, outputs;
      for (const auto& name : node.input()) inputs.push_back(name.empty() ? nullptr : lookup(name));
      for (const auto& name : node.output()) outputs.push_back(name.empty() ? nullptr : graph_->find_value(name));
      ir::Node* n = graph_->add_node(node.op_type(), inputs, outputs, node_name(node, i), domain,
                                     static_cast<int>(opset->second));
      for (const auto& attr : node.attribute()) {
        Result<ir::Attribute> converted = convert_attribute(attr, ctx_, *graph_);
        if (!converted.is_ok()) return converted.status().with_context(where(n->describe()));
        n->attributes[attr.name()] = std::move(converted).value();
      }
    }
    return Status::ok();
  }

  Status add_outputs() {
    for (const auto& info : proto_.output()) {
      KILN_ASSIGN_OR_RETURN(ir::TensorType type, type_from_proto(info.type(), where("output '" + info.name() + "'")));
      ir::Value* v = lookup(info.name());
      if (!v->is_constant() && type.dtype != DType::kUndefined) v->type = type;
      graph_->outputs.push_back(v);
    }
    return Status::ok();
  }

  const onnx::GraphProto& proto_;
  const ImportContext& ctx_;
  std::unique_ptr<ir::Graph> graph_;
};

}  // namespace

Result<std::unique_ptr<ir::Graph>> convert_graph(const onnx::GraphProto& proto, const ImportContext& ctx,
                                                 const ir::Graph* parent) {
  return GraphBuilder(proto, ctx, parent).build();
}

}  // namespace kiln::frontend
