// compile(): a model's IR to a CompiledModel (compiled_model.h), one stage after another:
//
//   analyse  types and shapes inferred; Gradient nodes expanded into ordinary ops
//   optimise the graph stage of the pass table (or, without rewrites, only what providers need)
//   place    each node on a provider under the fallback policy
//   lower    each provider's lowering stage over the nodes it holds (layouts, Winograd, chains),
//            then placed again
//   precision each product's arithmetic (precision_assignment.h): float32 unless asked otherwise
//
// Each stage returns its evidence into the CompiledModel, never into a report. A jit variant and a
// control-flow body go through the same stages (later_compilers).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>

#include "kiln/compiler/compiled_model.h"
#include "kiln/status.h"

namespace kiln::compiler {

// The providers a compile under `policy` places on: the policy's own, in order (generating kernels
// when `generate`, from an artifact's `embedded_code` where it has them), then every other one
// this build has, which the partitioner names in a refusal when one of them could run a node.
Result<partition::ProviderList> make_providers(const partition::FallbackPolicy& policy, const target::Target& target,
                                               bool generate, const std::map<std::string, std::string_view>& embedded_code);

Result<CompiledModel> compile(ir::Model model, const CompileOptions& options, const target::Target& target,
                              partition::ProviderList providers, Precompiled precompiled = {});

// A graph compiled on its own: where its nodes run, and the evidence of its stages.
struct CompiledGraph {
  partition::PartitionMap partition;
  CompileEvidence evidence;
};

// A jit variant: `graph`, a copy of the compiled model's with its input shapes pinned, compiled
// with its options and providers. The weights named in `packed_weights` are held only in a kernel
// layout: the graph passes see them as inputs, so none folds, merges or reads them.
using VariantCompiler = std::function<Result<CompiledGraph>(ir::Graph& graph, const std::set<std::string>& packed_weights)>;
// A control-flow body compiled as a graph of its own (runtime::BodyPlans): graph passes, placement
// and lowering, as the compiled model's graph got them.
using GraphCompiler = std::function<Result<partition::PartitionMap>(ir::Graph& graph)>;

// What is compiled after the load, through the same stages as compile(), with `compiled`'s options
// and providers: the engine is handed these with the compiled model and never runs a stage itself.
struct LaterCompilers {
  VariantCompiler variant;
  GraphCompiler body;
  std::shared_ptr<BodyPrecision> body_precision;  // what `body` chose for each body's products
};
LaterCompilers later_compilers(const CompiledModel& compiled);

}  // namespace kiln::compiler
