// Op family strings: StringNormalizer (stopword removal and locale-free UTF-8 case mapping),
// TfIdfVectorizer (n-gram counts with skips over string or integer tokens), and opset 20's
// StringConcat (broadcast), StringSplit and RegexFullMatch (RE2 syntax, as the spec says).
#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string_view>

#include <re2/re2.h>

#include "kiln/io/utf8.h"
#include "kiln/ops/family_support.h"
#include "kiln/ops/op_families.h"
#include "kiln/ops/op_helpers.h"
#include "kiln/ops/elementwise_broadcast.h"
#include "kiln/ops/op_registry.h"
#include "kiln/ops/strings.h"

namespace kiln::ops {
namespace {

// ---- Case mapping ----
// Kiln maps case itself instead of through the C library, whose result depends on the installed
// locales. Covered: ASCII, Latin-1 Supplement, Latin Extended-A, basic Greek and Cyrillic, one code
// point to one code point (so 'ß' stays 'ß'); everything else, and bytes that are not valid UTF-8,
// pass through unchanged. The `locale` attribute is accepted and does not change the mapping.

// Upper-case code points [first, last] whose lower case is code + delta; with step 2 only every
// second code point is upper case (its lower case follows it).
struct CaseRange {
  char32_t first, last;
  int32_t delta;
  char32_t step;
};

constexpr CaseRange kCaseRanges[] = {
    {0x41, 0x5A, 32, 1},    {0xC0, 0xD6, 32, 1},    {0xD8, 0xDE, 32, 1},   {0x100, 0x12E, 1, 2},
    {0x132, 0x136, 1, 2},   {0x139, 0x147, 1, 2},   {0x14A, 0x176, 1, 2},  {0x178, 0x178, -121, 1},
    {0x179, 0x17D, 1, 2},   {0x386, 0x386, 38, 1},  {0x388, 0x38A, 37, 1}, {0x38C, 0x38C, 64, 1},
    {0x38E, 0x38F, 63, 1},  {0x391, 0x3A1, 32, 1},  {0x3A3, 0x3AB, 32, 1}, {0x400, 0x40F, 80, 1},
    {0x410, 0x42F, 32, 1},
};

bool is_upper_in(const CaseRange& r, char32_t c) { return c >= r.first && c <= r.last && (c - r.first) % r.step == 0; }

char32_t to_lower(char32_t c) {
  if (c == 0x130) return U'i';  // dotted capital I
  for (const CaseRange& r : kCaseRanges)
    if (is_upper_in(r, c)) return static_cast<char32_t>(static_cast<int32_t>(c) + r.delta);
  return c;
}

char32_t to_upper(char32_t c) {
  switch (c) {
    case 0x131: return U'I';    // dotless i
    case 0x17F: return U'S';    // long s
    case 0xB5: return 0x39C;    // micro sign -> capital mu
    case 0x3C2: return 0x3A3;   // final sigma
    default: break;
  }
  for (const CaseRange& r : kCaseRanges) {
    const char32_t upper = static_cast<char32_t>(static_cast<int32_t>(c) - r.delta);
    if (is_upper_in(r, upper)) return upper;
  }
  return c;
}

std::string map_case(std::string_view s, char32_t (*map)(char32_t)) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const std::optional<std::pair<char32_t, size_t>> cp = io::decode_utf8(s, i);
    if (!cp) {
      out += s[i++];
      continue;
    }
    io::append_utf8(out, map(cp->first));
    i += cp->second;
  }
  return out;
}

// ---- StringNormalizer ----

enum class CaseAction { kNone, kLower, kUpper };

Result<CaseAction> case_action(const ir::Node& node) {
  const std::string action = node.attr_string("case_change_action", "NONE");
  if (action == "NONE") return CaseAction::kNone;
  if (action == "LOWER") return CaseAction::kLower;
  if (action == "UPPER") return CaseAction::kUpper;
  return invalid_model(node.describe() + ": case_change_action must be LOWER, UPPER or NONE, got '" + action + "'");
}

// The elements of x left after removing stopwords, case-mapped; one empty string when none is left.
Result<std::vector<std::string>> normalize_strings(const ir::Node& node, const Tensor& x) {
  KILN_ASSIGN_OR_RETURN(CaseAction action, case_action(node));
  const bool case_sensitive = node.attr_int("is_case_sensitive", 0) != 0;
  const auto key = [&](const std::string& s) { return case_sensitive ? s : map_case(s, to_lower); };
  std::set<std::string> stopwords;
  if (const ir::Attribute* a = node.attr("stopwords"))
    for (const std::string& s : a->strings) stopwords.insert(key(s));
  std::vector<std::string> kept;
  for (int64_t i = 0; i < x.element_count(); ++i) {
    const std::string& s = x.data<std::string>()[i];
    if (stopwords.count(key(s))) continue;
    kept.push_back(action == CaseAction::kLower   ? map_case(s, to_lower)
                   : action == CaseAction::kUpper ? map_case(s, to_upper)
                                                  : s);
  }
  if (kept.empty()) kept.emplace_back();
  return kept;
}

// [C] -> [C'] and [1, C] -> [1, C'], C' known only from the input's value.
Status string_normalizer_infer(InferenceContext& ctx) {
  KILN_RETURN_IF_ERROR(check_input_count(ctx, 1, 1));
  KILN_RETURN_IF_ERROR(check_input_dtype<TypeList<std::string>>(ctx, 0));
  KILN_RETURN_IF_ERROR(case_action(ctx.node()).status());
  const ir::TensorType& in = ctx.input_type(0);
  if (in.shape && in.shape->rank() != 1 && in.shape->rank() != 2) return ctx.error("input must have shape [C] or [1, C]");
  if (in.shape && in.shape->rank() == 2 && (*in.shape)[0].is_static() && (*in.shape)[0].value() != 1)
    return ctx.error("a 2-D input must have shape [1, C], got " + in.shape->to_string());
  ir::Dim kept;
  if (const Tensor* x = ctx.input_value(0)) {
    KILN_ASSIGN_OR_RETURN(std::vector<std::string> strings, normalize_strings(ctx.node(), *x));
    kept = ir::Dim(static_cast<int64_t>(strings.size()));
  }
  std::optional<ir::Shape> shape;
  if (in.shape) shape = in.shape->rank() == 1 ? ir::Shape({kept}) : ir::Shape({ir::Dim(1), kept});
  ctx.set_output_type(0, ir::TensorType{DType::kString, shape});
  return Status::ok();
}

Status string_normalizer_kernel(KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(std::vector<std::string> strings, normalize_strings(ctx.node(), *ctx.input(0)));
  std::copy(strings.begin(), strings.end(), ctx.output(0)->data<std::string>());
  return Status::ok();
}

// ---- TfIdfVectorizer ----

using IndexTypes = TypeList<int32_t, int64_t>;

enum class Weighting { kTF, kIDF, kTFIDF };

struct TfIdfConfig {
  Weighting mode = Weighting::kTF;
  int64_t min_n = 0, max_n = 0, max_skip = 0;
  std::vector<int64_t> level_starts;  // ngram_counts: where the n-grams of length n + 1 start in the pool
  std::vector<int64_t> indexes;       // ngram_indexes: output column of the k-th pool n-gram
  std::vector<float> weights;         // per output column; empty means 1
  bool string_pool = false;
  int64_t pool_size = 0;
  int64_t width = 0;  // output columns: max(ngram_indexes) + 1
};

Result<TfIdfConfig> tfidf_config(const ir::Node& node) {
  const std::string who = node.describe() + ": ";
  TfIdfConfig c;
  const std::string mode = node.attr_string("mode", "");
  if (mode == "TF") c.mode = Weighting::kTF;
  else if (mode == "IDF") c.mode = Weighting::kIDF;
  else if (mode == "TFIDF") c.mode = Weighting::kTFIDF;
  else return invalid_model(who + "mode must be TF, IDF or TFIDF, got '" + mode + "'");
  c.min_n = node.attr_int("min_gram_length", 0);
  c.max_n = node.attr_int("max_gram_length", 0);
  c.max_skip = node.attr_int("max_skip_count", 0);
  if (c.min_n < 1 || c.max_n < c.min_n) return invalid_model(who + "needs 1 <= min_gram_length <= max_gram_length");
  if (c.max_skip < 0) return invalid_model(who + "max_skip_count must not be negative");
  c.level_starts = node.attr_ints("ngram_counts");
  c.indexes = node.attr_ints("ngram_indexes");
  c.weights = node.attr_floats("weights");
  const bool has_ints = node.has_attr("pool_int64s"), has_strings = node.has_attr("pool_strings");
  if (has_ints == has_strings) return invalid_model(who + "needs exactly one of pool_int64s and pool_strings");
  c.string_pool = has_strings;
  c.pool_size = static_cast<int64_t>(has_strings ? node.attr("pool_strings")->strings.size()
                                                 : node.attr("pool_int64s")->ints.size());
  int64_t grams = 0;
  for (size_t level = 0; level < c.level_starts.size(); ++level) {
    const int64_t start = c.level_starts[level];
    const int64_t end = level + 1 < c.level_starts.size() ? c.level_starts[level + 1] : c.pool_size;
    const int64_t n = static_cast<int64_t>(level) + 1;
    if (start < 0 || end < start || end > c.pool_size || (end - start) % n != 0)
      return invalid_model(who + "ngram_counts does not split the pool into whole " + std::to_string(n) + "-grams");
    grams += (end - start) / n;
  }
  if (static_cast<int64_t>(c.indexes.size()) != grams)
    return invalid_model(who + "ngram_indexes has " + std::to_string(c.indexes.size()) + " entries for " +
                         std::to_string(grams) + " pool n-grams");
  for (int64_t index : c.indexes) {
    if (index < 0) return invalid_model(who + "ngram_indexes must not be negative");
    c.width = std::max(c.width, index + 1);
  }
  if (!c.weights.empty() && static_cast<int64_t>(c.weights.size()) < c.width)
    return invalid_model(who + "weights has " + std::to_string(c.weights.size()) + " values for " +
                         std::to_string(c.width) + " output columns");
  return c;
}

// Pool n-gram (tokens) -> output column.
template <class Token>
std::map<std::vector<Token>, int64_t> pool_columns(const TfIdfConfig& c, const std::vector<Token>& pool) {
  std::map<std::vector<Token>, int64_t> columns;
  size_t k = 0;
  for (size_t level = 0; level < c.level_starts.size(); ++level) {
    const int64_t end = level + 1 < c.level_starts.size() ? c.level_starts[level + 1] : c.pool_size;
    const int64_t n = static_cast<int64_t>(level) + 1;
    for (int64_t at = c.level_starts[level]; at < end; at += n)
      columns[std::vector<Token>(pool.begin() + at, pool.begin() + at + n)] = c.indexes[k++];
  }
  return columns;
}

// Counts in `counts` (one per column) every pool n-gram of length [min_n, max_n] in `row`, where an
// n-gram of length >= 2 takes every (skip + 1)-th token for each skip in [0, max_skip].
template <class Token>
void count_ngrams(const TfIdfConfig& c, const std::map<std::vector<Token>, int64_t>& columns,
                  const std::vector<Token>& row, std::vector<double>& counts) {
  const int64_t length = static_cast<int64_t>(row.size());
  std::vector<Token> gram;
  for (int64_t start = 0; start < length; ++start) {
    for (int64_t n = c.min_n; n <= c.max_n; ++n) {
      for (int64_t skip = 0; skip <= (n == 1 ? 0 : c.max_skip); ++skip) {
        if (start + (n - 1) * (skip + 1) >= length) break;
        gram.clear();
        for (int64_t j = 0; j < n; ++j) gram.push_back(row[static_cast<size_t>(start + j * (skip + 1))]);
        if (auto it = columns.find(gram); it != columns.end()) counts[static_cast<size_t>(it->second)] += 1.0;
      }
    }
  }
}

double weigh(const TfIdfConfig& c, double count, size_t column) {
  const double weight = c.weights.empty() ? 1.0 : static_cast<double>(c.weights[column]);
  switch (c.mode) {
    case Weighting::kTF: return count;
    case Weighting::kIDF: return count > 0.0 ? weight : 0.0;
    case Weighting::kTFIDF: return count * weight;
  }
  return count;
}

Status tfidf_infer(InferenceContext& ctx) {
  KILN_RETURN_IF_ERROR(check_input_count(ctx, 1, 1));
  KILN_ASSIGN_OR_RETURN(TfIdfConfig c, tfidf_config(ctx.node()));
  const ir::TensorType& in = ctx.input_type(0);
  if (c.string_pool) KILN_RETURN_IF_ERROR(check_input_dtype<TypeList<std::string>>(ctx, 0));
  else KILN_RETURN_IF_ERROR(check_input_dtype<IndexTypes>(ctx, 0));
  std::optional<ir::Shape> shape;
  if (in.shape) {
    if (in.shape->rank() == 1) shape = ir::Shape({ir::Dim(c.width)});
    else if (in.shape->rank() == 2) shape = ir::Shape({(*in.shape)[0], ir::Dim(c.width)});
    else return ctx.error("input must have shape [C] or [N, C], got " + in.shape->to_string());
  }
  ctx.set_output_type(0, ir::TensorType{DType::kFloat, shape});
  return Status::ok();
}

// Y's rows from x's tokens, flattened row-major into `rows` rows.
template <class Token>
void tfidf_rows(const TfIdfConfig& c, const std::vector<Token>& pool, const std::vector<Token>& tokens, int64_t rows,
                Tensor& out) {
  const std::map<std::vector<Token>, int64_t> columns = pool_columns(c, pool);
  const size_t cols = rows > 0 ? tokens.size() / static_cast<size_t>(rows) : 0;
  float* y = out.data<float>();
  for (size_t r = 0; r < static_cast<size_t>(rows); ++r) {
    const std::vector<Token> row(tokens.begin() + static_cast<std::ptrdiff_t>(r * cols),
                                 tokens.begin() + static_cast<std::ptrdiff_t>((r + 1) * cols));
    std::vector<double> counts(static_cast<size_t>(c.width), 0.0);
    count_ngrams(c, columns, row, counts);
    for (size_t j = 0; j < counts.size(); ++j) *y++ = static_cast<float>(weigh(c, counts[j], j));
  }
}

Status tfidf_kernel(KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(TfIdfConfig c, tfidf_config(ctx.node()));
  const Tensor& x = *ctx.input(0);
  const int64_t rows = x.rank() == 2 ? x.shape()[0] : 1;
  if (c.string_pool) {
    const std::vector<std::string> tokens(x.data<std::string>(), x.data<std::string>() + x.element_count());
    tfidf_rows(c, ctx.node().attr("pool_strings")->strings, tokens, rows, *ctx.output(0));
  } else {
    KILN_ASSIGN_OR_RETURN(std::vector<int64_t> tokens, read_int64s(x, "input"));
    tfidf_rows(c, ctx.node().attr("pool_int64s")->ints, tokens, rows, *ctx.output(0));
  }
  return Status::ok();
}

// ---- StringConcat ----

Status string_concat_infer(InferenceContext& ctx) {
  KILN_RETURN_IF_ERROR(check_input_count(ctx, 2, 2));
  KILN_RETURN_IF_ERROR(check_input_dtype<TypeList<std::string>>(ctx, 0));
  KILN_RETURN_IF_ERROR(check_input_dtype<TypeList<std::string>>(ctx, 1));
  ir::TensorType out{DType::kString, std::nullopt};
  if (ctx.input_type(0).shape && ctx.input_type(1).shape) {
    Result<ir::Shape> shape = broadcast_shapes(*ctx.input_type(0).shape, *ctx.input_type(1).shape);
    if (!shape.is_ok()) return ctx.error(shape.status().message());
    out.shape = *shape;
  }
  ctx.set_output_type(0, std::move(out));
  return Status::ok();
}

Status string_concat_kernel(KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  const Tensor& y = *ctx.input(1);
  Tensor& z = *ctx.output(0);
  const std::string* xs = x.data<std::string>();
  const std::string* ys = y.data<std::string>();
  std::string* zs = z.data<std::string>();
  for_each_broadcast<2>(z.shape(), {x.shape(), y.shape()}, [&](int64_t i, const std::array<int64_t, 2>& at) {
    zs[i] = xs[at[0]] + ys[at[1]];
  });
  return Status::ok();
}

// ---- StringSplit ----
// As ONNX Runtime splits (its outputs are the reference here): with a delimiter, consecutive
// delimiters delimit empty strings; without one (or ""), runs of spaces (' ' only) separate and
// leading and trailing spaces are dropped, also from the unsplit rest after `maxsplit` splits. An
// empty string has no substrings in either form.

struct SplitConfig {
  std::string delimiter;
  int64_t maxsplit = -1;  // negative: no limit
};

SplitConfig split_config(const ir::Node& node) {
  return SplitConfig{node.attr_string("delimiter", ""), node.attr_int("maxsplit", -1)};
}

std::vector<std::string_view> split_string(std::string_view s, const SplitConfig& c) {
  std::vector<std::string_view> parts;
  if (s.empty()) return parts;
  const auto splits_left = [&] { return c.maxsplit < 0 || static_cast<int64_t>(parts.size()) < c.maxsplit; };
  if (!c.delimiter.empty()) {
    size_t at = 0;
    for (size_t next; splits_left() && (next = s.find(c.delimiter, at)) != std::string_view::npos;
         at = next + c.delimiter.size())
      parts.push_back(s.substr(at, next - at));
    parts.push_back(s.substr(at));
    return parts;
  }
  for (size_t at = s.find_first_not_of(' '); at != std::string_view::npos; at = s.find_first_not_of(' ', at)) {
    if (!splits_left()) {
      parts.push_back(s.substr(at, s.find_last_not_of(' ') + 1 - at));
      break;
    }
    const size_t end = std::min(s.find(' ', at), s.size());
    parts.push_back(s.substr(at, end - at));
    at = end;
  }
  return parts;
}

// The substrings of every element of x, and the most any element has.
std::pair<std::vector<std::vector<std::string_view>>, int64_t> split_all(const ir::Node& node, const Tensor& x) {
  const SplitConfig c = split_config(node);
  std::vector<std::vector<std::string_view>> parts(static_cast<size_t>(x.element_count()));
  int64_t widest = 0;
  for (size_t i = 0; i < parts.size(); ++i) {
    parts[i] = split_string(x.data<std::string>()[i], c);
    widest = std::max(widest, static_cast<int64_t>(parts[i].size()));
  }
  return {std::move(parts), widest};
}

// Y: X's shape + [the most substrings of any element] (known from X's value only); Z: X's shape.
Status string_split_infer(InferenceContext& ctx) {
  KILN_RETURN_IF_ERROR(check_input_count(ctx, 1, 1));
  KILN_RETURN_IF_ERROR(check_input_dtype<TypeList<std::string>>(ctx, 0));
  const ir::TensorType& in = ctx.input_type(0);
  std::optional<ir::Shape> substrings;
  if (in.shape) {
    std::vector<ir::Dim> dims = in.shape->dims();
    dims.push_back(ctx.input_value(0) ? ir::Dim(split_all(ctx.node(), *ctx.input_value(0)).second) : ir::Dim());
    substrings = ir::Shape(std::move(dims));
  }
  ctx.set_output_type(0, ir::TensorType{DType::kString, substrings});
  ctx.set_output_type(1, ir::TensorType{DType::kInt64, in.shape});
  return Status::ok();
}

Status string_split_kernel(KernelContext& ctx) {
  const auto [parts, widest] = split_all(ctx.node(), *ctx.input(0));
  std::string* y = ctx.output(0)->data<std::string>();
  for (size_t i = 0; i < parts.size(); ++i)
    for (size_t k = 0; k < parts[i].size(); ++k) y[static_cast<int64_t>(i) * widest + static_cast<int64_t>(k)] = parts[i][k];
  if (Tensor* z = ctx.output(1))
    for (size_t i = 0; i < parts.size(); ++i) z->data<int64_t>()[i] = static_cast<int64_t>(parts[i].size());
  return Status::ok();
}

// ---- RegexFullMatch ----

// The node's `pattern`, compiled; InvalidModel with RE2's reason when it is not a valid RE2 regex.
Result<std::unique_ptr<re2::RE2>> compile_pattern(const ir::Node& node) {
  if (!node.has_attr("pattern")) return invalid_model(node.describe() + ": attribute 'pattern' is required");
  re2::RE2::Options options;
  options.set_log_errors(false);
  auto regex = std::make_unique<re2::RE2>(node.attr_string("pattern", ""), options);
  if (!regex->ok())
    return invalid_model(node.describe() + ": attribute 'pattern' is not an RE2 regular expression: " + regex->error());
  return regex;
}

Status regex_full_match_infer(InferenceContext& ctx) {
  KILN_RETURN_IF_ERROR(check_input_count(ctx, 1, 1));
  KILN_RETURN_IF_ERROR(check_input_dtype<TypeList<std::string>>(ctx, 0));
  KILN_RETURN_IF_ERROR(compile_pattern(ctx.node()).status());
  ctx.set_output_type(0, ir::TensorType{DType::kBool, ctx.input_type(0).shape});
  return Status::ok();
}

Status regex_full_match_kernel(KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Kernel kernel, regex_full_match_kernel_for(ctx.node()));
  return kernel(ctx);
}

}  // namespace

Result<Kernel> regex_full_match_kernel_for(const ir::Node& node) {
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<re2::RE2> compiled, compile_pattern(node));
  std::shared_ptr<const re2::RE2> regex = std::move(compiled);
  return Kernel([regex](KernelContext& ctx) {
    const Tensor& x = *ctx.input(0);
    for (int64_t i = 0; i < x.element_count(); ++i)
      ctx.output(0)->data<bool>()[i] = re2::RE2::FullMatch(x.data<std::string>()[i], *regex);
    return Status::ok();
  });
}

void register_string_ops(OpRegistry& r) {
  r.add({"", "StringNormalizer", 10, string_normalizer_infer, string_normalizer_kernel});
  r.add({"", "TfIdfVectorizer", 9, tfidf_infer, tfidf_kernel});
  r.add({"", "StringConcat", 20, string_concat_infer, string_concat_kernel});
  r.add({"", "StringSplit", 20, string_split_infer, string_split_kernel});
  r.add({"", "RegexFullMatch", 20, regex_full_match_infer, regex_full_match_kernel});
}

}  // namespace kiln::ops
