// The IR text parser (parser.h): a recursive descent over the printer's grammar.
#include "kiln/ir/parser.h"

#include <cctype>
#include <charconv>
#include <cstdint>
#include <cmath>
#include <cstring>
#include <limits>

namespace kiln::ir {
namespace {

std::optional<DType> dtype_named(std::string_view name) {
  for (int d = 0; d <= static_cast<int>(DType::kInt4); ++d)
    if (name == dtype_name(static_cast<DType>(d))) return static_cast<DType>(d);
  return std::nullopt;
}

// The largest constant the text may declare (its values, or zeros): IR text is for small graphs.
constexpr int64_t kMaxTextElements = int64_t{1} << 24;

class Parser {
 public:
  Parser(std::string_view text, int opset) : text_(text), opset_(opset) {}

  Result<std::unique_ptr<Graph>> graph(const Graph* parent) {
    KILN_RETURN_IF_ERROR(expect_word("graph"));
    auto g = std::make_unique<Graph>(word(), parent);
    if (g->name().empty()) return error("a graph name");
    KILN_RETURN_IF_ERROR(expect("("));
    KILN_RETURN_IF_ERROR(typed_list(*g, g->inputs, true));
    KILN_RETURN_IF_ERROR(expect("->"));
    KILN_RETURN_IF_ERROR(expect("("));
    std::vector<Value*> outputs;
    KILN_RETURN_IF_ERROR(typed_list(*g, outputs, false));
    KILN_RETURN_IF_ERROR(expect("{"));
    while (!accept("}")) {
      if (at_end()) return error("'}' closing graph " + g->name());
      KILN_RETURN_IF_ERROR(statement(*g));
    }
    for (Value* v : outputs) {
      if (!v->producer && !v->is_constant() && !g->is_graph_input(v) && !parent)
        return error("a node giving graph output %" + v->name);
      g->outputs.push_back(v);
    }
    return g;
  }

  bool at_end() {
    skip_space();
    return pos_ >= text_.size();
  }
  Status error(const std::string& expected) const {
    int line = 1;
    for (size_t i = 0; i < pos_ && i < text_.size(); ++i) line += text_[i] == '\n';
    const size_t end = text_.find('\n', pos_);
    const std::string_view here = text_.substr(std::min(pos_, text_.size()), end == std::string_view::npos ? end : end - pos_);
    return invalid_argument("IR text, line " + std::to_string(line) + ": expected " + expected + " at '" + std::string(here.substr(0, 40)) + "'");
  }

 private:
  void skip_space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool accept(std::string_view token) {
    skip_space();
    if (text_.substr(pos_, token.size()) != token) return false;
    pos_ += token.size();
    return true;
  }
  Status expect(std::string_view token) { return accept(token) ? Status::ok() : error("'" + std::string(token) + "'"); }
  // Letters, digits, '_', '.', '/', '-', and ':' when a name character follows it (value names as
  // exporters write them, "input:0"; ": " starts a type).
  std::string word() {
    skip_space();
    const size_t start = pos_;
    const auto name_char = [&](size_t i) {
      return i < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[i])) || std::strchr("_./-", text_[i]));
    };
    while (name_char(pos_) || (pos_ < text_.size() && text_[pos_] == ':' && name_char(pos_ + 1))) ++pos_;
    return std::string(text_.substr(start, pos_ - start));
  }
  Status expect_word(std::string_view w) {
    const size_t start = pos_;
    if (word() == w) return Status::ok();
    pos_ = start;
    return error("'" + std::string(w) + "'");
  }
  Result<std::string> quoted(char quote) {
    if (!accept(std::string_view(&quote, 1))) return error(std::string("a ") + quote + "-quoted string");
    const size_t end = text_.find(quote, pos_);
    if (end == std::string_view::npos) return error("a closing " + std::string(1, quote));
    std::string s(text_.substr(pos_, end - pos_));
    pos_ = end + 1;
    return s;
  }

  // %name, or _ for an omitted input or output.
  Result<std::string> value_name(bool may_omit) {
    if (may_omit && accept("_")) return std::string();
    if (!accept("%")) return error("a value (%name)");
    std::string name = word();
    if (name.empty()) return error("a value name after '%'");
    return name;
  }

  Result<TensorType> type() {
    const size_t start = pos_;
    const std::string head = word();
    if (head == "seq" || head == "optional") {
      KILN_RETURN_IF_ERROR(expect("("));
      KILN_ASSIGN_OR_RETURN(TensorType element, type());
      KILN_RETURN_IF_ERROR(expect(")"));
      return head == "seq" ? TensorType::sequence_of(std::move(element)) : TensorType::optional_of(std::move(element));
    }
    const std::optional<DType> dtype = dtype_named(head);
    if (!dtype) {
      pos_ = start;
      return error("a type (float[2,N], seq(int64[3]), undefined...)");
    }
    TensorType t(*dtype);
    if (text_.substr(pos_, 1) == "[") {  // no space between a dtype and its dims
      KILN_ASSIGN_OR_RETURN(t.shape, shape());
    }
    return t;
  }

  Result<Shape> shape() {
    KILN_RETURN_IF_ERROR(expect("["));
    std::vector<Dim> dims;
    while (!accept("]")) {
      if (!dims.empty()) KILN_RETURN_IF_ERROR(expect(","));
      if (accept("?")) {
        dims.push_back(Dim::unknown());
        continue;
      }
      const std::string d = word();
      if (d.empty()) return error("a dim (a size, a symbol or ?)");
      int64_t size = 0;
      const auto [end, ec] = std::from_chars(d.data(), d.data() + d.size(), size);
      if (ec == std::errc() && end == d.data() + d.size() && size >= 0) dims.emplace_back(size);
      else if (std::isalpha(static_cast<unsigned char>(d[0])) || d[0] == '_') dims.push_back(Dim::symbol(d));
      else return error("a dim (a size, a symbol or ?)");
    }
    return Shape(std::move(dims));
  }

  // "%a: float[2], %b" in a graph's header: inputs are new values; outputs may name values the
  // body makes.
  Status typed_list(Graph& g, std::vector<Value*>& list, bool inputs) {
    while (!accept(")")) {
      if (!list.empty()) KILN_RETURN_IF_ERROR(expect(","));
      KILN_ASSIGN_OR_RETURN(const std::string name, value_name(false));
      TensorType t;
      if (accept(":")) {
        KILN_ASSIGN_OR_RETURN(t, type());
      }
      if (inputs && g.find_value(name)) return error("a new name for input %" + name);
      Value* v = g.find_value(name);
      // A subgraph's output may be a value of the enclosing scope, typed there.
      const Value* outer = !inputs && !v && !t.is_known() && g.parent() ? g.parent()->find_value_in_scope(name) : nullptr;
      if (!v) v = g.add_value(name, outer ? outer->type : t);
      list.push_back(v);
    }
    return Status::ok();
  }

  // A number as written: digits with sign, '.', exponent, or inf / nan.
  std::string number_text() {
    skip_space();
    const size_t start = pos_;
    while (pos_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) || std::strchr("+-.", text_[pos_]))) ++pos_;
    return std::string(text_.substr(start, pos_ - start));
  }
  static bool is_float_text(const std::string& s) {
    return s.find_first_of(".eEiInN") != std::string::npos;
  }
  // A float or double as written (inf and nan with their signs); out of the type's range is an error.
  template <class F>
  Result<F> to_floating(const std::string& s) {
    if (s == "inf" || s == "+inf") return std::numeric_limits<F>::infinity();
    if (s == "-inf") return -std::numeric_limits<F>::infinity();
    if (s == "nan" || s == "+nan") return std::numeric_limits<F>::quiet_NaN();
    if (s == "-nan") return -std::numeric_limits<F>::quiet_NaN();
    F v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || end != s.data() + s.size()) return error("a number");
    return v;
  }
  Result<int64_t> to_int(const std::string& s) {
    int64_t v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || end != s.data() + s.size()) return error("an integer");
    return v;
  }

  // [n, n, ...] as written (numbers' texts).
  Result<std::vector<std::string>> number_list() {
    KILN_RETURN_IF_ERROR(expect("["));
    std::vector<std::string> items;
    while (!accept("]")) {
      if (!items.empty()) KILN_RETURN_IF_ERROR(expect(","));
      items.push_back(number_text());
      if (items.back().empty()) return error("a number");
    }
    return items;
  }

  // dtype[dims] and, optionally, every value: a constant or a tensor attribute.
  Result<Tensor> tensor() {
    KILN_ASSIGN_OR_RETURN(const TensorType t, type());
    if (!t.is_tensor() || !t.shape || !t.shape->is_static()) return error("a tensor type with static dims");
    const std::vector<int64_t> dims = t.shape->static_dims();
    int64_t elements = 1;
    for (int64_t d : dims) {
      if (d > 0 && elements > kMaxTextElements / d) return error("a tensor of at most " + std::to_string(kMaxTextElements) + " elements");
      elements *= d;
    }
    Tensor tensor = Tensor::allocate(t.dtype, dims);
    if (tensor.byte_size() > 0) std::memset(tensor.raw_data(), 0, tensor.byte_size());
    skip_space();
    if (text_.substr(pos_, 1) != "[") return tensor;
    KILN_ASSIGN_OR_RETURN(const std::vector<std::string> items, number_list());
    if (static_cast<int64_t>(items.size()) != tensor.element_count())
      return error(std::to_string(tensor.element_count()) + " values for " + t.to_string());
    const bool floating = t.dtype == DType::kFloat || t.dtype == DType::kDouble;
    if (!floating && t.dtype != DType::kInt64 && t.dtype != DType::kInt32 && t.dtype != DType::kBool)
      return error("no values for a " + t.to_string() + " (float, double, int64, int32 and bool take them)");
    for (size_t i = 0; i < items.size(); ++i) {
      if (t.dtype == DType::kFloat) {
        KILN_ASSIGN_OR_RETURN(tensor.data<float>()[i], to_floating<float>(items[i]));
        continue;
      }
      if (floating) {
        KILN_ASSIGN_OR_RETURN(tensor.data<double>()[i], to_floating<double>(items[i]));
        continue;
      }
      KILN_ASSIGN_OR_RETURN(const int64_t v, to_int(items[i]));
      const int64_t lo = t.dtype == DType::kBool ? 0 : t.dtype == DType::kInt32 ? INT32_MIN : INT64_MIN;
      const int64_t hi = t.dtype == DType::kBool ? 1 : t.dtype == DType::kInt32 ? INT32_MAX : INT64_MAX;
      if (v < lo || v > hi) return error("a value " + t.to_string() + " holds");
      if (t.dtype == DType::kInt64) tensor.data<int64_t>()[i] = v;
      else if (t.dtype == DType::kInt32) tensor.data<int32_t>()[i] = static_cast<int32_t>(v);
      else tensor.data<bool>()[i] = v != 0;
    }
    return tensor;
  }

  Result<Attribute> attribute(const Graph& g) {
    skip_space();
    const size_t start = pos_;
    if (text_.substr(pos_, 1) == "\"") {
      KILN_ASSIGN_OR_RETURN(std::string s, quoted('"'));
      return Attribute::of_string(std::move(s));
    }
    if (text_.substr(pos_, 1) == "[") {
      std::vector<std::string> items;
      KILN_RETURN_IF_ERROR(expect("["));
      std::vector<std::string> strings;
      while (!accept("]")) {
        if (!items.empty() || !strings.empty()) KILN_RETURN_IF_ERROR(expect(","));
        skip_space();
        if (text_.substr(pos_, 1) == "\"") {
          KILN_ASSIGN_OR_RETURN(std::string s, quoted('"'));
          strings.push_back(std::move(s));
        } else {
          items.push_back(number_text());
          if (items.back().empty()) return error("a number or a \"string\"");
        }
      }
      if (!strings.empty() && !items.empty()) return error("a list of numbers or of strings, not both");
      if (!strings.empty()) return Attribute::of_strings(std::move(strings));
      bool floats = false;
      for (const std::string& s : items) floats = floats || is_float_text(s);
      if (floats) {
        std::vector<float> values;
        for (const std::string& s : items) {
          KILN_ASSIGN_OR_RETURN(const float v, to_floating<float>(s));
          values.push_back(v);
        }
        return Attribute::of_floats(std::move(values));
      }
      std::vector<int64_t> values;
      for (const std::string& s : items) {
        KILN_ASSIGN_OR_RETURN(const int64_t v, to_int(s));
        values.push_back(v);
      }
      return Attribute::of_ints(std::move(values));
    }
    const std::string w = word();
    pos_ = start;
    if (w == "graph") {
      std::vector<std::shared_ptr<Graph>> graphs;
      while (true) {
        const size_t before = pos_;
        if (word() != "graph") {
          pos_ = before;
          break;
        }
        pos_ = before;
        KILN_ASSIGN_OR_RETURN(std::unique_ptr<Graph> body, graph(&g));
        graphs.push_back(std::move(body));
      }
      if (graphs.size() == 1) return Attribute::of_graph(std::move(graphs[0]));
      Attribute a;
      a.kind = Attribute::Kind::kGraphs;
      a.graphs = std::move(graphs);
      return a;
    }
    if (dtype_named(w) || w == "seq" || w == "optional") {
      if (text_.substr(start + w.size(), 1) == "[") {
        KILN_ASSIGN_OR_RETURN(Tensor t, tensor());
        return Attribute::of_tensor(std::move(t));
      }
      KILN_ASSIGN_OR_RETURN(TensorType t, type());
      return Attribute::of_type(std::move(t));
    }
    const std::string n = number_text();
    if (n.empty()) return error("an attribute value");
    if (is_float_text(n)) {
      KILN_ASSIGN_OR_RETURN(const float v, to_floating<float>(n));
      return Attribute::of_float(v);
    }
    KILN_ASSIGN_OR_RETURN(const int64_t v, to_int(n));
    return Attribute::of_int(v);
  }

  // A value a node reads: one defined above, else (in a subgraph) a read of the enclosing scope.
  Result<Value*> read(Graph& g, const std::string& name) {
    if (name.empty()) return static_cast<Value*>(nullptr);
    if (Value* v = g.find_value(name)) return v;
    if (g.parent() && g.parent()->find_value_in_scope(name)) return g.add_value(name, g.parent()->find_value_in_scope(name)->type);
    return error("a value defined before %" + name + " is read");
  }

  // "%c = constant ..." or "%a: T, %b = [domain.]Op 'name'(%x, _) {key=value}".
  Status statement(Graph& g) {
    std::vector<std::pair<std::string, TensorType>> outputs;
    do {
      KILN_ASSIGN_OR_RETURN(std::string name, value_name(true));
      if (const Value* v = name.empty() ? nullptr : g.find_value(name); v && (v->producer || v->is_constant() || g.is_graph_input(v)))
        return error("a new name for output %" + name);
      TensorType t;
      if (!name.empty() && accept(":")) {
        KILN_ASSIGN_OR_RETURN(t, type());
      }
      outputs.emplace_back(std::move(name), std::move(t));
    } while (accept(","));
    KILN_RETURN_IF_ERROR(expect("="));
    const size_t start = pos_;
    if (word() == "constant") {
      if (outputs.size() != 1 || outputs[0].first.empty()) return error("one value named by a constant");
      KILN_ASSIGN_OR_RETURN(Tensor t, tensor());
      Value* v = g.find_value(outputs[0].first);  // a graph output named in the header, else new
      if (!v) {
        g.add_constant(outputs[0].first, std::move(t));
        return Status::ok();
      }
      v->type = make_type(t.dtype(), t.shape());
      v->initializer = std::move(t);
      return Status::ok();
    }
    pos_ = start;
    const std::string qualified = word();
    if (qualified.empty()) return error("an op");
    const size_t dot = qualified.rfind('.');
    const std::string domain = dot == std::string::npos ? "" : qualified.substr(0, dot);
    const std::string op = dot == std::string::npos ? qualified : qualified.substr(dot + 1);
    std::string node_name;
    skip_space();
    if (text_.substr(pos_, 1) == "'") {
      KILN_ASSIGN_OR_RETURN(node_name, quoted('\''));
    }
    KILN_RETURN_IF_ERROR(expect("("));
    std::vector<Value*> inputs;
    while (!accept(")")) {
      if (!inputs.empty()) KILN_RETURN_IF_ERROR(expect(","));
      KILN_ASSIGN_OR_RETURN(const std::string name, value_name(true));
      KILN_ASSIGN_OR_RETURN(Value* v, read(g, name));
      inputs.push_back(v);
    }
    std::map<std::string, Attribute> attributes;
    if (accept("{")) {
      while (!accept("}")) {
        if (!attributes.empty()) KILN_RETURN_IF_ERROR(expect(","));
        const std::string key = word();
        if (key.empty()) return error("an attribute name");
        KILN_RETURN_IF_ERROR(expect("="));
        KILN_ASSIGN_OR_RETURN(attributes[key], attribute(g));
      }
    }
    std::vector<Value*> produced;
    for (const auto& [name, t] : outputs) {
      if (name.empty()) {
        produced.push_back(nullptr);
        continue;
      }
      Value* v = g.find_value(name);  // new, or a graph output named in the header
      if (!v) v = g.add_value(name, t);
      else if (t.is_known()) v->type = t;
      produced.push_back(v);
    }
    Node* node = g.add_node(op, std::move(inputs), std::move(produced), node_name, domain, opset_);
    node->attributes = std::move(attributes);
    return Status::ok();
  }

  std::string_view text_;
  int opset_;
  size_t pos_ = 0;
};

}  // namespace

Result<std::unique_ptr<Graph>> parse_graph(std::string_view text, int opset_version) {
  Parser parser(text, opset_version);
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<Graph> graph, parser.graph(nullptr));
  if (!parser.at_end()) return parser.error("the end of the text after the graph");
  return graph;
}

}  // namespace kiln::ir
