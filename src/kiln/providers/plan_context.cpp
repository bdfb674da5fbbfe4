// PlanContext: what a plan's kernels are built from; and the constants they may pack in place.
#include "kiln/providers/plan_context.h"

namespace kiln::providers {

PlanContext::PlanContext(std::vector<PackedConstant> prepacked, std::set<std::string> packed_only)
    : packed_only_(std::move(packed_only)) {
  for (PackedConstant& p : prepacked) {
    PackedKey key(p.value, p.layout);
    // The same bytes may come twice (an artifact's, and a plan's record of them): the one that
    // describes its layout is the one to keep.
    const auto it = prepacked_.find(key);
    if (it == prepacked_.end()) prepacked_.emplace(std::move(key), std::move(p));
    else if (!it->second.descriptor.has_value() && p.descriptor.has_value()) it->second = std::move(p);
  }
}

void PlanContext::allow_packing_in_place(std::set<std::string> candidates, std::shared_ptr<InPlaceLedger> ledger) {
  in_place_candidates_ = std::move(candidates);
  ledger_ = std::move(ledger);
}

void PlanContext::set_provider_state(const std::string& provider, std::shared_ptr<ProviderPlanState> state) {
  provider_states_[provider] = std::move(state);
}

ProviderPlanState* PlanContext::provider_state(const std::string& provider) const {
  const auto it = provider_states_.find(provider);
  return it == provider_states_.end() ? nullptr : it->second.get();
}

std::shared_ptr<const ProviderPlanState> PlanContext::shared_provider_state(const std::string& provider) const {
  const auto it = provider_states_.find(provider);
  return it == provider_states_.end() ? nullptr : it->second;
}

std::set<std::string> sole_reader_constants(const ir::Graph& graph) {
  std::map<const ir::Value*, int> reads;
  std::set<std::string> captured;
  for (const auto& node : graph.nodes()) {
    for (const ir::Value* input : node->inputs)
      if (input && input->is_constant()) ++reads[input];
    for (const std::string& name : ir::names_captured_by(*node)) captured.insert(name);
  }
  std::set<std::string> sole;
  for (const auto& [value, count] : reads)
    if (count == 1 && !graph.is_graph_output(value) && !captured.count(value->name)) sole.insert(value->name);
  return sole;
}

}  // namespace kiln::providers
