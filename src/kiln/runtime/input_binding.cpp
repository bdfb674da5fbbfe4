// Input validation and ordering.
#include "kiln/runtime/input_binding.h"

#include <cmath>

namespace kiln::runtime {

namespace {

std::string input_names(const ir::Graph& graph) {
  std::string s;
  for (const ir::Value* v : graph.inputs) s += (s.empty() ? "" : ", ") + v->name;
  return s;
}

// Checks `shape` against the declared type of `input`, binding its symbols in `symbols`.
Status check_shape(const ir::Value& input, const std::vector<int64_t>& shape, std::map<std::string, int64_t>& symbols) {
  if (!input.type.shape) return Status::ok();
  const ir::Shape& declared = *input.type.shape;
  if (declared.rank() != shape.size())
    return invalid_argument("input '" + input.name + "' has rank " + std::to_string(shape.size()) + " (shape " +
                            shape_to_string(shape) + ") but the model expects rank " + std::to_string(declared.rank()) +
                            " " + input.type.to_string());
  for (size_t i = 0; i < shape.size(); ++i) {
    const ir::Dim& d = declared[i];
    if (d.is_static() && d.value() != shape[i])
      return invalid_argument("input '" + input.name + "' dim " + std::to_string(i) + " is " + std::to_string(shape[i]) +
                              " but the model requires " + std::to_string(d.value()) + " " + input.type.to_string());
    if (d.is_symbol()) {
      auto [it, fresh] = symbols.emplace(d.symbol_name(), shape[i]);
      if (!fresh && it->second != shape[i])
        return invalid_argument("input '" + input.name + "' dim " + std::to_string(i) + " ('" + d.symbol_name() +
                                "') is " + std::to_string(shape[i]) + " but another input binds '" + d.symbol_name() +
                                "' to " + std::to_string(it->second));
    }
  }
  return Status::ok();
}

// A sequence or optional input must match the declared container kind and element dtype.
Status check_container(const ir::Value& input, const Value& value) {
  const bool sequence = input.type.kind == ir::TensorType::Kind::kSequence;
  const Value::Kind expected = sequence ? Value::Kind::kSequence : Value::Kind::kOptional;
  if (value.kind() != expected)
    return invalid_argument("input '" + input.name + "' is a " + value.describe() + " but the model expects " +
                            input.type.to_string());
  const ir::TensorType* element = input.type.element.get();
  if (sequence && element && element->is_tensor() && element->dtype != DType::kUndefined &&
      value.element_dtype() != element->dtype)
    return invalid_argument("input '" + input.name + "' is a sequence of " + dtype_name(value.element_dtype()) +
                            " but the model expects " + input.type.to_string());
  return Status::ok();
}

}  // namespace

Result<std::vector<Value>> bind_inputs(const ir::Graph& graph, const std::map<std::string, Value>& inputs) {
  for (const auto& [name, tensor] : inputs) {
    const ir::Value* v = graph.find_value(name);
    if (!v || !graph.is_graph_input(v))
      return invalid_argument("unknown input '" + name + "' (model inputs: " + input_names(graph) + ")");
  }
  std::vector<Value> ordered;
  std::map<std::string, int64_t> symbols;
  for (const ir::Value* in : graph.inputs) {
    auto it = inputs.find(in->name);
    if (it == inputs.end())
      return invalid_argument("missing input '" + in->name + "' of type " + in->type.to_string());
    if (!in->type.is_tensor()) {
      KILN_RETURN_IF_ERROR(check_container(*in, it->second));
      ordered.push_back(it->second);
      continue;
    }
    if (!it->second.is_tensor())
      return invalid_argument("input '" + in->name + "' is a " + it->second.describe() + " but the model expects " +
                              in->type.to_string());
    const Tensor& t = it->second.tensor();
    if (!t.defined()) return invalid_argument("input '" + in->name + "' is an empty (undefined) tensor");
    if (t.dtype() != in->type.dtype)
      return invalid_argument("input '" + in->name + "' has dtype " + dtype_name(t.dtype()) + " but the model expects " +
                              dtype_name(in->type.dtype));
    if (t.dtype() != DType::kString && !t.raw_data() && t.element_count() > 0)
      return invalid_argument("input '" + in->name + "' has no data");
    KILN_RETURN_IF_ERROR(check_shape(*in, t.shape(), symbols));
    ordered.push_back(t);
  }
  return ordered;
}

Result<std::vector<std::vector<int64_t>>> load_time_shapes(const ir::Graph& graph,
                                                           const std::map<std::string, std::vector<int64_t>>& given,
                                                           const std::map<std::string, int64_t>& symbol_values) {
  for (const auto& [name, shape] : given) {
    const ir::Value* v = graph.find_value(name);
    if (!v || !graph.is_graph_input(v))
      return invalid_argument("input shape given for unknown input '" + name + "' (model inputs: " + input_names(graph) +
                              ")");
  }
  std::vector<std::vector<int64_t>> shapes;
  std::map<std::string, int64_t> symbols;
  for (const ir::Value* in : graph.inputs) {
    auto it = given.find(in->name);
    if (it != given.end()) {
      KILN_RETURN_IF_ERROR(check_shape(*in, it->second, symbols));
      shapes.push_back(it->second);
      continue;
    }
    if (!in->type.is_tensor()) {
      shapes.emplace_back();  // sequences and optionals are planned as dynamic values
      continue;
    }
    if (!in->type.shape)
      return invalid_argument("input '" + in->name + "' has unknown rank; give its shape (--shape " + in->name +
                              "=1x3x224x224 or SessionOptions::input_shapes)");
    std::vector<int64_t> shape;
    for (const ir::Dim& d : in->type.shape->dims()) {
      if (d.is_static()) {
        shape.push_back(d.value());
        continue;
      }
      const auto bound = d.is_symbol() ? symbols.find(d.symbol_name()) : symbols.end();
      const auto preset = d.is_symbol() ? symbol_values.find(d.symbol_name()) : symbol_values.end();
      shape.push_back(bound != symbols.end() ? bound->second : preset != symbol_values.end() ? preset->second : 1);
    }
    KILN_RETURN_IF_ERROR(check_shape(*in, shape, symbols));
    shapes.push_back(shape);
  }
  return shapes;
}

bool has_guessed_dims(const ir::Graph& graph, const std::map<std::string, std::vector<int64_t>>& given,
                      const std::map<std::string, int64_t>& symbol_values) {
  for (const ir::Value* in : graph.inputs) {
    if (given.count(in->name) || !in->type.is_tensor() || !in->type.shape) continue;
    for (const ir::Dim& d : in->type.shape->dims())
      if (!d.is_static() && !(d.is_symbol() && symbol_values.count(d.symbol_name()))) return true;
  }
  return false;
}

Status check_input_set(const ir::Graph& graph, const InputSet& set) {
  const auto fail = [&](const Status& status) { return status.with_context("inputs '" + set.source + "'"); };
  if (set.tensors.empty()) return fail(invalid_argument("no input tensors"));
  std::map<std::string, Value> values(set.tensors.begin(), set.tensors.end());
  if (Result<std::vector<Value>> bound = bind_inputs(graph, values); !bound.is_ok()) return fail(bound.status());
  for (const ir::Value* input : graph.inputs)
    if (!set.tensors.count(input->name)) return fail(invalid_argument("input '" + input->name + "' is missing"));
  for (const auto& [name, tensor] : set.tensors) {
    if (tensor.dtype() != DType::kFloat && tensor.dtype() != DType::kDouble && tensor.dtype() != DType::kFloat16 &&
        tensor.dtype() != DType::kBFloat16)
      continue;
    bool all_nan = tensor.element_count() > 0;
    for (int64_t i = 0; all_nan && i < tensor.element_count(); ++i) all_nan = std::isnan(element_as_double(tensor, i));
    if (all_nan) return fail(invalid_argument("input '" + name + "' is all NaN"));
  }
  return Status::ok();
}

}  // namespace kiln::runtime
