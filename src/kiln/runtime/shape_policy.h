// ShapePolicy: what a session does with the input shapes a run brings (SessionOptions). Shapes
// pinned at load (specialize) must be given as pinned; a shape profile's ranges are checked, and a
// shape outside them is rejected, padded up to its bucket (outputs cut back after the run) or let
// through to get a variant of its own (out_of_profile). It keeps the guards' evidence.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "kiln/ir/graph.h"
#include "kiln/report/report.h"
#include "kiln/runtime/shape_padding.h"
#include "kiln/runtime/shape_specialization.h"
#include "kiln/session.h"
#include "kiln/status.h"
#include "kiln/value.h"

namespace kiln::runtime {

class ShapePolicy {
 public:
  ShapePolicy() = default;
  // The policy of `options` over `graph`, whose input shapes `pinned` pinned (none unless
  // specialize). InvalidArgument when the profile names a symbol the graph's inputs lack.
  static Result<ShapePolicy> make(const ir::Graph& graph, const SessionOptions& options, SpecializedShapes pinned);

  // The profile's max sizes when shapes beyond them are never run (reject, pad): the arena for
  // them can be reserved at load.
  std::optional<std::map<std::string, int64_t>> bounded_max() const;
  // Checks `inputs` (pinned shapes, then the profile), recording the check; a shape outside the
  // profile is a ShapeGuardFailure when the policy rejects it.
  Status check(const ir::Graph& graph, const std::map<std::string, Value>& inputs);
  // check(), then under the pad policy `inputs` padded to their buckets (none when no dim needed it).
  Result<std::optional<PaddedRun>> admit(const ir::Graph& graph, const std::map<std::string, Value>& inputs);
  // `t`, output `info` of a run padded as `padded`, cut back to its real sizes.
  static Value cut_padding(const TensorInfo& info, Value t, const PaddedRun& padded);

  const report::GuardSection& evidence() const { return evidence_; }

 private:
  std::map<std::string, DimRange> profile_;
  OutOfProfile out_of_profile_ = OutOfProfile::kReject;
  SpecializedShapes pinned_;
  report::GuardSection evidence_;
};

}  // namespace kiln::runtime
