// Shape profiles and their guards (see shape_profile.h).
#include "kiln/runtime/shape_profile.h"

#include <set>

namespace kiln::runtime {
namespace {

Result<int64_t> parse_dim(const std::string& text, const std::string& entry) {
  if (text.empty() || text.size() > 12 || text.find_first_not_of("0123456789") != std::string::npos)
    return invalid_argument("shape profile entry '" + entry + "': '" + text + "' is not a non-negative integer");
  return std::stoll(text);
}

}  // namespace

std::string range_text(const DimRange& r) {
  return std::to_string(r.min) + ":" + std::to_string(r.opt) + ":" + std::to_string(r.max);
}

std::string GuardViolation::describe() const {
  return "input '" + input + "' dim " + std::to_string(dim) + " (" + symbol + ") is " + std::to_string(value) +
         ", outside the profile " + symbol + "=" + range_text(range);
}

Status check_shape_profile(const ir::Graph& graph, const std::map<std::string, DimRange>& profile) {
  std::set<std::string> symbols;
  for (const ir::Value* in : graph.inputs)
    if (in->type.is_tensor() && in->type.shape)
      for (const ir::Dim& d : in->type.shape->dims())
        if (d.is_symbol()) symbols.insert(d.symbol_name());
  for (const auto& [symbol, r] : profile) {
    if (r.min < 0 || r.min > r.opt || r.opt > r.max)
      return invalid_argument("shape profile " + symbol + "=" + range_text(r) + " must have 0 <= min <= opt <= max");
    if (!symbols.count(symbol)) {
      std::string known;
      for (const std::string& s : symbols) known += (known.empty() ? "" : ", ") + s;
      return invalid_argument("shape profile names '" + symbol + "', which no input dim has (symbolic dims: " +
                              (known.empty() ? "none" : known) + ")");
    }
  }
  return Status::ok();
}

std::map<std::string, int64_t> profile_defaults(const std::map<std::string, DimRange>& profile) {
  std::map<std::string, int64_t> defaults;
  for (const auto& [symbol, r] : profile) defaults[symbol] = r.opt;
  return defaults;
}

std::optional<GuardViolation> first_violation(const ir::Graph& graph, const std::map<std::string, DimRange>& profile,
                                              const std::map<std::string, Value>& inputs) {
  for (const ir::Value* in : graph.inputs) {
    const auto given = inputs.find(in->name);
    if (given == inputs.end() || !given->second.is_tensor() || !in->type.is_tensor() || !in->type.shape) continue;
    const std::vector<int64_t>& shape = given->second.tensor().shape();
    const auto& dims = in->type.shape->dims();
    for (size_t d = 0; d < dims.size() && d < shape.size(); ++d) {
      if (!dims[d].is_symbol()) continue;
      const auto range = profile.find(dims[d].symbol_name());
      if (range != profile.end() && (shape[d] < range->second.min || shape[d] > range->second.max))
        return GuardViolation{in->name, dims[d].symbol_name(), d, shape[d], range->second};
    }
  }
  return std::nullopt;
}

Result<std::map<std::string, DimRange>> parse_shape_profile(const std::string& text) {
  std::map<std::string, DimRange> profile;
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t comma = text.find(',', pos);
    const std::string entry = text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    pos = comma == std::string::npos ? text.size() : comma + 1;
    const size_t eq = entry.find('=');
    const size_t c1 = entry.find(':', eq == std::string::npos ? 0 : eq), c2 = c1 == std::string::npos ? c1 : entry.find(':', c1 + 1);
    if (eq == std::string::npos || eq == 0 || c1 == std::string::npos || c2 == std::string::npos)
      return invalid_argument("shape profile entry '" + entry + "' must look like SYMBOL=MIN:OPT:MAX");
    DimRange r;
    KILN_ASSIGN_OR_RETURN(r.min, parse_dim(entry.substr(eq + 1, c1 - eq - 1), entry));
    KILN_ASSIGN_OR_RETURN(r.opt, parse_dim(entry.substr(c1 + 1, c2 - c1 - 1), entry));
    KILN_ASSIGN_OR_RETURN(r.max, parse_dim(entry.substr(c2 + 1), entry));
    profile[entry.substr(0, eq)] = r;
  }
  return profile;
}

}  // namespace kiln::runtime
