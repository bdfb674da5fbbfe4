// Text printer for the IR (parser.h reads its form back).
#include "kiln/ir/printer.h"

#include <charconv>
#include <sstream>

namespace kiln::ir {

namespace {

std::string value_ref(const Value* v) { return v ? "%" + v->name : "_"; }

std::string typed(const Value* v) {
  if (!v) return "_";
  return "%" + v->name + ": " + v->type.to_string();
}

// A float as the shortest text that reads back to it, always with a '.' or an exponent (or inf,
// nan), so that the parser (parser.h) tells it from an integer.
std::string float_text(float v) {
  char buffer[32];
  const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, v);
  std::string s(buffer, ec == std::errc() ? end : buffer);
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";  // "n": inf and nan
  return s;
}

std::string item_text(int64_t v) { return std::to_string(v); }
std::string item_text(float v) { return float_text(v); }
std::string item_text(const std::string& v) { return "\"" + v + "\""; }

template <class T>
std::string join(const std::vector<T>& items) {
  std::string s = "[";
  for (size_t i = 0; i < items.size(); ++i) s += (i ? "," : "") + item_text(items[i]);
  return s + "]";
}

std::string tensor_summary(const Tensor& t) {
  std::string s = std::string(dtype_name(t.dtype())) + shape_to_string(t.shape());
  if (t.dtype() == DType::kInt64 && t.element_count() <= 8) {
    std::vector<int64_t> v(t.data<int64_t>(), t.data<int64_t>() + t.element_count());
    s += " " + join(v);
  } else if (t.dtype() == DType::kFloat && t.element_count() <= 4) {
    std::vector<float> v(t.data<float>(), t.data<float>() + t.element_count());
    s += " " + join(v);
  }
  return s;
}

}  // namespace

std::string print_attribute(const Attribute& attr, int indent) {
  switch (attr.kind) {
    case Attribute::Kind::kInt: return std::to_string(attr.i);
    case Attribute::Kind::kFloat: return float_text(attr.f);
    case Attribute::Kind::kString: return "\"" + attr.s + "\"";
    case Attribute::Kind::kTensor: return tensor_summary(attr.t);
    case Attribute::Kind::kGraph: return attr.g ? "\n" + print_graph(*attr.g, indent + 4) : "null";
    case Attribute::Kind::kInts: return join(attr.ints);
    case Attribute::Kind::kFloats: return join(attr.floats);
    case Attribute::Kind::kStrings: return join(attr.strings);
    case Attribute::Kind::kTensors: return "<" + std::to_string(attr.tensors.size()) + " tensors>";
    case Attribute::Kind::kType: return attr.type ? attr.type->to_string() : "?";
    case Attribute::Kind::kGraphs: {
      std::string s;
      for (const auto& g : attr.graphs)
        if (g) s += "\n" + print_graph(*g, indent + 4);
      return s;
    }
  }
  return "?";
}

std::string print_node(const Node& node, int indent) {
  std::ostringstream s;
  s << std::string(indent + 2, ' ');
  for (size_t i = 0; i < node.outputs.size(); ++i) s << (i ? ", " : "") << typed(node.outputs[i]);
  s << " = " << (node.domain.empty() ? "" : node.domain + ".") << node.op_type;
  if (!node.name.empty()) s << " '" << node.name << "'";
  s << "(";
  for (size_t i = 0; i < node.inputs.size(); ++i) s << (i ? ", " : "") << value_ref(node.inputs[i]);
  s << ")";
  if (!node.attributes.empty()) {
    s << " {";
    bool first = true;
    for (const auto& [key, attr] : node.attributes) {
      s << (first ? "" : ", ") << key << "=" << print_attribute(attr, indent + 2);
      first = false;
    }
    s << "}";
  }
  return s.str();
}

std::string print_graph(const Graph& graph, int indent) {
  std::ostringstream s;
  const std::string pad(indent, ' ');
  s << pad << "graph " << graph.name() << " (";
  for (size_t i = 0; i < graph.inputs.size(); ++i) s << (i ? ", " : "") << typed(graph.inputs[i]);
  s << ") -> (";
  for (size_t i = 0; i < graph.outputs.size(); ++i) s << (i ? ", " : "") << typed(graph.outputs[i]);
  s << ") {\n";
  for (const auto& v : graph.values()) {
    if (v->is_constant()) s << pad << "  %" << v->name << " = constant " << tensor_summary(*v->initializer) << "\n";
  }
  for (const auto& node : graph.nodes()) s << print_node(*node, indent) << "\n";
  s << pad << "}";
  return s.str();
}

}  // namespace kiln::ir
