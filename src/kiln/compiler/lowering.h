// Lowering: after partition, each of the policy's providers rewrites the nodes it holds into the
// forms its kernels run fastest (the lowering stage of the pass table: activation layouts,
// Winograd, element-wise chains); nodes placed on other providers stay as they are. The same
// step for the main graph (compile.h) and for control-flow bodies compiled as graphs of their own
// (BodyPlans), so an If branch or Loop body runs its convolutions in the layouts the main graph's do.
#pragma once

#include <cstddef>
#include <vector>

#include "kiln/ir/graph.h"
#include "kiln/ops/numeric_precision.h"
#include "kiln/partition/partitioner.h"
#include "kiln/passes/pass_manager.h"
#include "kiln/status.h"

namespace kiln::compiler {

// Lowers `graph` as placed by `placed` for the first `policy_providers` of `providers` (the
// policy's own, in order), each as it prefers for products of `precision` (the compile's
// preference). Returns one PassRun per pass invocation, each naming its provider; a changed graph
// must be placed again.
Result<std::vector<passes::PassRun>> lower_for_providers(ir::Graph& graph, const partition::PartitionMap& placed,
                                                         const partition::ProviderList& providers, size_t policy_providers,
                                                         const passes::PipelineOptions& pipeline,
                                                         const std::vector<ops::Precision>& precision);

// Whether any of `runs` changed the graph.
bool any_changed(const std::vector<passes::PassRun>& runs);

}  // namespace kiln::compiler
