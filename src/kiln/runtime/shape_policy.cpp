// The shape policy of a session's runs (see shape_policy.h).
#include "kiln/runtime/shape_policy.h"

#include <chrono>

#include "kiln/ir/elapsed.h"
#include "kiln/runtime/shape_profile.h"

namespace kiln::runtime {

Result<ShapePolicy> ShapePolicy::make(const ir::Graph& graph, const SessionOptions& options, SpecializedShapes pinned) {
  KILN_RETURN_IF_ERROR(check_shape_profile(graph, options.shape_profile));
  ShapePolicy policy;
  policy.profile_ = options.shape_profile;
  policy.out_of_profile_ = options.out_of_profile;
  policy.pinned_ = std::move(pinned);
  report::GuardSection& g = policy.evidence_;
  for (const auto& [symbol, r] : options.shape_profile) g.profile += (g.profile.empty() ? "" : ",") + symbol + "=" + range_text(r);
  g.policy = options.out_of_profile == OutOfProfile::kReject ? "reject"
             : options.out_of_profile == OutOfProfile::kPad  ? "pad"
                                                               : "specialize";
  return policy;
}

std::optional<std::map<std::string, int64_t>> ShapePolicy::bounded_max() const {
  if (profile_.empty() || out_of_profile_ == OutOfProfile::kSpecialize) return std::nullopt;
  std::map<std::string, int64_t> max;
  for (const auto& [symbol, r] : profile_) max[symbol] = r.max;
  return max;
}

Status ShapePolicy::check(const ir::Graph& graph, const std::map<std::string, Value>& inputs) {
  KILN_RETURN_IF_ERROR(check_specialized_shapes(pinned_, inputs));
  if (profile_.empty()) return Status::ok();
  const auto start = std::chrono::steady_clock::now();
  const std::optional<GuardViolation> violation = first_violation(graph, profile_, inputs);
  report::GuardSection& g = evidence_;
  g.checks += 1;
  g.check_us += ms_since(start) * 1000;
  if (!violation) return Status::ok();
  const bool reject = out_of_profile_ == OutOfProfile::kReject ||
                      (out_of_profile_ == OutOfProfile::kPad && violation->value > violation->range.max);
  g.failures += 1;
  g.recent.push_back({violation->input, violation->symbol, static_cast<int64_t>(violation->dim), violation->value,
                      range_text(violation->range),
                      reject ? "rejected" : out_of_profile_ == OutOfProfile::kPad ? "padded" : "specialized"});
  if (g.recent.size() > report::GuardSection::kRecentFailures) g.recent.erase(g.recent.begin());
  if (reject) return shape_guard_failure(violation->describe() + " (policy: " + g.policy + ")");
  return Status::ok();
}

Result<std::optional<PaddedRun>> ShapePolicy::admit(const ir::Graph& graph, const std::map<std::string, Value>& inputs) {
  KILN_RETURN_IF_ERROR(check(graph, inputs));
  if (profile_.empty() || out_of_profile_ != OutOfProfile::kPad) return std::optional<PaddedRun>();
  KILN_ASSIGN_OR_RETURN(PaddedRun padded, pad_to_buckets(graph, profile_, inputs));
  if (padded.padded_elements == 0) return std::optional<PaddedRun>();
  evidence_.padded_runs += 1;
  evidence_.real_elements += padded.real_elements;
  evidence_.padded_elements += padded.padded_elements;
  return std::optional<PaddedRun>(std::move(padded));
}

Value ShapePolicy::cut_padding(const TensorInfo& info, Value v, const PaddedRun& padded) {
  if (!v.is_tensor() || v.tensor().dtype() == DType::kString) return v;
  std::vector<int64_t> shape = v.tensor().shape();
  bool cut = false;
  for (size_t d = 0; d < shape.size() && d < info.dim_names.size(); ++d) {
    const auto size = padded.symbols.find(info.dim_names[d]);
    if (size != padded.symbols.end() && size->second < shape[d]) {
      shape[d] = size->second;
      cut = true;
    }
  }
  return cut ? Value(resized_copy(v.tensor(), shape)) : v;
}

}  // namespace kiln::runtime
