// The artifact's packed section: weights already in the layouts the compiled plan's kernels read
// them in (the plan evidence's packed constants), so a load binds them without reordering or copying.
// Weights every reader of which takes them packed are stored only packed (no plain copy), when
// the graph's input shapes are static: a plan for other shapes might want other layouts.
#pragma once

#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "kiln/ir/graph.h"
#include "kiln/providers/plan_evidence.h"
#include "kiln/status.h"

namespace kiln::artifact {

// The initializers of `graph` to store only packed, by name: those `build` holds only packed, and
// those whose every reader takes them in one packed layout no smaller than the plain one.
std::set<std::string> packed_only_values(const ir::Graph& graph, const providers::PlanEvidence& build);

struct PackedSection {
  std::string bytes;     // each constant 64-byte aligned
  nlohmann::json index;  // [{value, layout, offset, bytes}], in (value, layout) order
};

PackedSection encode_packed(const providers::PlanEvidence& build);

// The packed constants `index` lists: views into `bytes`, which lie in the memory `owner` keeps
// alive. IntegrityFailure naming the entry when one is malformed or does not fit.
Result<std::vector<providers::PackedConstant>> decode_packed(std::string_view bytes, const std::shared_ptr<const char>& owner,
                                                             const nlohmann::json& index);

}  // namespace kiln::artifact
