// Shape profiles: the range (min:opt:max) each symbolic input dim may take, and what a session
// does with an input outside its profile: reject it (ShapeGuardFailure naming the input, dim,
// symbol and range) or specialise for it (compile a variant, counted as a guard failure). The
// load-time plan is built for every profiled symbol at its opt value.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kiln/ir/graph.h"
#include "kiln/session.h"
#include "kiln/status.h"
#include "kiln/value.h"

namespace kiln::runtime {

// InvalidArgument when a range has min > opt, opt > max or a negative min, or names a symbol no
// input dim of `graph` has (naming the symbols there are).
Status check_shape_profile(const ir::Graph& graph, const std::map<std::string, DimRange>& profile);

// Symbol -> opt, for the load-time plan.
std::map<std::string, int64_t> profile_defaults(const std::map<std::string, DimRange>& profile);

// "min:opt:max".
std::string range_text(const DimRange& range);

// An input dim outside its profile.
struct GuardViolation {
  std::string input, symbol;
  size_t dim = 0;
  int64_t value = 0;
  DimRange range;
  std::string describe() const;  // "input 'x' dim 0 (batch) is 40, outside the profile 1:8:32"
};

// The first input dim (inputs in graph order) outside `profile`; none when all are inside.
std::optional<GuardViolation> first_violation(const ir::Graph& graph, const std::map<std::string, DimRange>& profile,
                                              const std::map<std::string, Value>& inputs);

// "batch=1:8:32,seq=1:128:512" -> the profile; InvalidArgument naming the bad entry.
Result<std::map<std::string, DimRange>> parse_shape_profile(const std::string& text);

}  // namespace kiln::runtime
