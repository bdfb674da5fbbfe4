// PlanContext: what building one plan's kernels reads, made by whoever plans (the engine, a
// control-flow body's planner) and handed to every provider with the plan's evidence
// (kernel_build.h); the plan keeps only the evidence.
//  - Constants packed ahead (an artifact's, or the session's other plans'), which kernels bind
//    without packing; those an artifact stores only packed have no plain copy.
//  - Packing in place: a session's first plan may pack a constant in place, its packed bytes
//    overwriting the plain ones (same size), so the model's weights are held once. That needs the
//    packing node to be the constant's only reader (sole_reader_constants) and nothing to read the
//    plain bytes later: the constant is packed-only from then on, recorded in a ledger the session
//    keeps, and a kernel that wants another layout reorders from the packed one
//    (PackedConstant::descriptor).
//  - How control-flow bodies run, the tuner, whether kernels may be generated, and each
//    provider's own state for the plan (ProviderPlanState).
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "kiln/ir/graph.h"
#include "kiln/ops/op_registry.h"
#include "kiln/providers/plan_evidence.h"

namespace kiln::providers {

class Tuner;

// Constants packed in place, by value.
using InPlaceLedger = std::map<std::string, PackedConstant>;

// What a provider keeps while one plan's kernels are built: made in its begin_plan, read by its
// kernels and its finish_plan (the cpu provider's: the module its generated kernels join). Only
// that provider knows its type.
class ProviderPlanState {
 public:
  virtual ~ProviderPlanState() = default;
};

class PlanContext {
 public:
  PlanContext() = default;
  // `prepacked`: constants packed ahead; those named in `packed_only` have no plain copy (their
  // initializers hold packed bytes).
  PlanContext(std::vector<PackedConstant> prepacked, std::set<std::string> packed_only);

  const std::map<PackedKey, PackedConstant>& prepacked() const { return prepacked_; }
  const std::set<std::string>& packed_only() const { return packed_only_; }

  // Lets kernels pack `candidates` in place, recording each in `ledger`, which the session keeps
  // whether or not the plan is then built.
  void allow_packing_in_place(std::set<std::string> candidates, std::shared_ptr<InPlaceLedger> ledger);
  bool may_pack_in_place(const std::string& value) const { return ledger_ && in_place_candidates_.count(value) > 0; }
  InPlaceLedger& in_place_ledger() const { return *ledger_; }

  // How the plan runs the bodies of its control-flow nodes: through plans of the policy's
  // providers (runtime/body_plans.h), set by the plan builder; empty in a bare context.
  void set_body_runner(ops::SubgraphRunner runner) { body_runner_ = std::move(runner); }
  const ops::SubgraphRunner& body_runner() const { return body_runner_; }

  // The tuner that chooses among a kernel's candidates (tuning.h); null: providers' heuristics.
  void set_tuner(std::shared_ptr<Tuner> tuner) { tuner_ = std::move(tuner); }
  Tuner* tuner() const { return tuner_.get(); }

  // Whether a provider may generate kernels for this plan (off: an artifact's plan for shapes its
  // embedded objects do not cover, with no compiler to build them, uses the library kernels).
  void forbid_generated_kernels() { generated_allowed_ = false; }
  bool generated_kernels_allowed() const { return generated_allowed_; }

  // Provider `provider`'s state for this plan; null when it keeps none.
  void set_provider_state(const std::string& provider, std::shared_ptr<ProviderPlanState> state);
  ProviderPlanState* provider_state(const std::string& provider) const;
  std::shared_ptr<const ProviderPlanState> shared_provider_state(const std::string& provider) const;

 private:
  std::map<PackedKey, PackedConstant> prepacked_;
  std::set<std::string> packed_only_;
  std::set<std::string> in_place_candidates_;
  std::shared_ptr<InPlaceLedger> ledger_;
  ops::SubgraphRunner body_runner_;
  std::shared_ptr<Tuner> tuner_;
  bool generated_allowed_ = true;
  std::map<std::string, std::shared_ptr<ProviderPlanState>> provider_states_;
};

// Constants of `graph` read by exactly one input of one node (not graph outputs, not read by a
// subgraph): those a kernel may pack in place.
std::set<std::string> sole_reader_constants(const ir::Graph& graph);

}  // namespace kiln::providers
