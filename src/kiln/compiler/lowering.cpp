// Lowering for the providers that hold a graph's nodes (see lowering.h).
#include "kiln/compiler/lowering.h"

#include <set>

#include "kiln/ops/op_registry.h"
#include "kiln/passes/pass_context.h"

namespace kiln::compiler {

Result<std::vector<passes::PassRun>> lower_for_providers(ir::Graph& graph, const partition::PartitionMap& placed,
                                                         const partition::ProviderList& providers, size_t policy_providers,
                                                         const passes::PipelineOptions& pipeline,
                                                         const std::vector<ops::Precision>& precision) {
  std::vector<passes::PassRun> all;
  for (size_t i = 0; i < policy_providers && i < providers.size(); ++i) {
    const providers::Provider& provider = *providers[i];
    const ops::GraphPreferences preferred = provider.graph_preferences(precision);
    if (preferred.empty()) continue;
    // Nodes placed elsewhere stay as they are; those made by this lowering are the provider's.
    std::set<const ir::Node*> elsewhere;
    for (const partition::Assignment& a : placed.assignments)
      if (a.provider != provider.name()) elsewhere.insert(a.node);
    passes::PassContext ctx{ops::OpRegistry::global()};
    ctx.preferences = preferred;
    ctx.owned = [&elsewhere](const ir::Node& node) { return !elsewhere.count(&node); };
    KILN_ASSIGN_OR_RETURN(std::vector<passes::PassRun> runs, passes::run_table_stage(graph, ctx, passes::kLoweringStage, pipeline));
    for (passes::PassRun& run : runs) {
      run.provider = provider.name();
      all.push_back(std::move(run));
    }
  }
  return all;
}

bool any_changed(const std::vector<passes::PassRun>& runs) {
  for (const passes::PassRun& run : runs)
    if (run.changed) return true;
  return false;
}

}  // namespace kiln::compiler
