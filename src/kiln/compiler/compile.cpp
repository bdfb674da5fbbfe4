// The compile pipeline's stages (see compile.h).
#include "kiln/compiler/compile.h"

#include <algorithm>
#include <chrono>
#include <utility>
#include <vector>

#include "kiln/autodiff/gradient_expansion.h"
#include "kiln/compiler/lowering.h"
#include "kiln/ir/elapsed.h"
#include "kiln/ir/verifier.h"
#include "kiln/ops/op_registry.h"
#include "kiln/passes/half_in_float.h"
#include "kiln/passes/legacy_forms.h"
#include "kiln/passes/pass_context.h"
#include "kiln/providers/registry/provider_registry.h"

namespace kiln::compiler {
namespace {

using Clock = std::chrono::steady_clock;

// Types and shapes inferred; Gradient nodes become ordinary ops, whose types are then inferred.
Status analyse(ir::Model& model, CompileEvidence& evidence) {
  const auto start = Clock::now();
  KILN_ASSIGN_OR_RETURN(evidence.analysis, analysis::infer_types(*model.graph, ops::OpRegistry::global()));
  KILN_ASSIGN_OR_RETURN(const int gradients, autodiff::expand_gradients(model));
  if (gradients > 0) {
    // The first inference already replaced the stale declarations: its record of them stands.
    std::vector<analysis::DeclarationDisagreement> disagreements = std::move(evidence.analysis.declaration_disagreements);
    KILN_ASSIGN_OR_RETURN(evidence.analysis, analysis::infer_types(*model.graph, ops::OpRegistry::global()));
    evidence.analysis.declaration_disagreements = std::move(disagreements);
  }
  evidence.analysis_ms = ms_since(start);
  return Status::ok();
}

// The graph stage of the passes; without rewrites (eager mode, optimize off) only what a provider
// without float16 kernels needs to place float16 ops: their types lowered all the same.
Status optimise(ir::Graph& graph, const CompileOptions& options, const partition::ProviderList& providers,
                CompileEvidence& evidence) {
  const auto start = Clock::now();
  passes::PassContext ctx{ops::OpRegistry::global()};
  ctx.preferences = providers.front()->graph_preferences(options.precision.preference);  // the policy's first choice
  evidence.passes.clear();
  if (options.rewrite) {
    KILN_ASSIGN_OR_RETURN(evidence.passes, passes::run_table_stage(graph, ctx, passes::kGraphStage, options.pipeline));
  } else {
    KILN_RETURN_IF_ERROR(passes::modernise_legacy_forms(graph, ctx).status());
    KILN_RETURN_IF_ERROR(passes::compute_half_in_float(graph, ctx).status());
  }
  evidence.nodes_after_passes = ir::count_nodes(graph);
  evidence.passes_ms = ms_since(start);
  return Status::ok();
}

Result<partition::PartitionMap> place(ir::Graph& graph, const CompileOptions& options, const partition::ProviderList& providers,
                                      CompileEvidence& evidence) {
  const auto start = Clock::now();
  KILN_ASSIGN_OR_RETURN(evidence.partition, partition::partition_graph(graph, options.policy, providers));
  evidence.partition_ms = ms_since(start);
  return evidence.partition;
}

// Placement, then (with rewrites, on a graph not optimised already) each of the policy's providers
// lowers the nodes it holds, and a changed graph is placed again.
Result<partition::PartitionMap> place_and_lower(ir::Graph& graph, const CompileOptions& options,
                                                const partition::ProviderList& providers, CompileEvidence& evidence) {
  KILN_ASSIGN_OR_RETURN(partition::PartitionMap placed, place(graph, options, providers, evidence));
  if (!options.rewrite || options.optimised) return placed;
  const auto start = Clock::now();
  KILN_ASSIGN_OR_RETURN(std::vector<passes::PassRun> runs,
                        lower_for_providers(graph, placed, providers, options.policy.preferred.size(), options.pipeline,
                                            options.precision.preference));
  evidence.passes.insert(evidence.passes.end(), runs.begin(), runs.end());
  evidence.nodes_after_passes = ir::count_nodes(graph);
  evidence.passes_ms += ms_since(start);
  if (!any_changed(runs)) return placed;
  return place(graph, options, providers, evidence);
}

// Placed and lowered, then each product's precision chosen (an optimised graph keeps its own).
Result<partition::PartitionMap> place_lower_and_choose_precision(ir::Graph& graph, const CompileOptions& options,
                                                                 const partition::ProviderList& providers, CompileEvidence& evidence) {
  KILN_ASSIGN_OR_RETURN(partition::PartitionMap placed, place_and_lower(graph, options, providers, evidence));
  evidence.precision = options.optimised ? recorded_precision(graph) : assign_precision(graph, placed, providers, options.precision);
  return placed;
}

}  // namespace

Result<partition::ProviderList> make_providers(const partition::FallbackPolicy& policy, const target::Target& target,
                                               bool generate, const std::map<std::string, std::string_view>& embedded_code) {
  std::vector<std::string> names = policy.preferred;
  names.insert(names.end(), policy.allowed_fallback.begin(), policy.allowed_fallback.end());
  for (const std::string& name : providers::available_providers())
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  partition::ProviderList list;
  for (size_t i = 0; i < names.size(); ++i) {
    providers::ProviderConfig config{target};
    if (i < policy.preferred.size() && generate) {  // the policy's own providers generate
      config.generate_kernels = true;
      config.embedded_code = embedded_code;
    }
    KILN_ASSIGN_OR_RETURN(auto provider, providers::make_provider(names[i], config));
    list.push_back(std::move(provider));
  }
  return list;
}

Result<CompiledModel> compile(ir::Model model, const CompileOptions& options, const target::Target& target,
                              partition::ProviderList providers, Precompiled precompiled) {
  // Member by member: GCC 12 unwinds a brace-initialised aggregate wrongly when a member's copy
  // throws (std::bad_alloc), freeing members never made.
  CompiledModel compiled;
  compiled.model = std::move(model);
  compiled.options = options;
  compiled.target = target;
  compiled.providers = std::move(providers);
  compiled.precompiled = std::move(precompiled);
  ir::Graph& graph = *compiled.model.graph;
  CompileEvidence& evidence = compiled.evidence;
  KILN_RETURN_IF_ERROR(analyse(compiled.model, evidence));
  if (!options.optimised) KILN_RETURN_IF_ERROR(resolve_keep_fp32(graph, compiled.options.precision));
  if (!options.optimised) KILN_RETURN_IF_ERROR(optimise(graph, options, compiled.providers, evidence));
  evidence.nodes_after_passes = ir::count_nodes(graph);
  if (options.place) {
    KILN_ASSIGN_OR_RETURN(compiled.partition, place_and_lower(graph, options, compiled.providers, evidence));
    if (!options.optimised) KILN_RETURN_IF_ERROR(check_precision_request(compiled.providers, options.precision));
    evidence.precision = options.optimised ? recorded_precision(graph)
                                           : assign_precision(graph, compiled.partition, compiled.providers, compiled.options.precision);
  } else {
    KILN_RETURN_IF_ERROR(check_precision_request(compiled.providers, options.precision));
  }
  // Variants and bodies compiled later take an artifact's compile's choices: its preference and
  // the products it kept fp32 (an artifact without them: the preference the graph's marks show).
  if (options.optimised) {
    PrecisionOptions& later = compiled.options.precision;
    const bool recorded = !compiled.precompiled.precision_preference.empty();
    later.preference = recorded ? compiled.precompiled.precision_preference : evidence.precision.requested;
    evidence.precision.requested = later.preference;
    later.kept_source_nodes = compiled.precompiled.kept_fp32_sources;
    later.fallback_source_nodes = compiled.precompiled.fallback_fp32_sources;
  }
  return compiled;
}

namespace {

Result<CompiledGraph> compile_variant(ir::Graph& graph, CompileOptions options, const partition::ProviderList& providers,
                                      const std::set<std::string>& packed_weights) {
  CompiledGraph out;
  auto inferred = analysis::infer_types(graph, ops::OpRegistry::global());
  if (!inferred.is_ok()) return inferred.status().with_context("specialising to the given input shapes");
  out.evidence.analysis = std::move(inferred).value();
  options.place = true;
  // The weights held packed become graph inputs while the graph passes run.
  std::vector<std::pair<ir::Value*, Tensor>> hidden;
  for (const std::string& name : packed_weights) {
    ir::Value* v = graph.find_value(name);
    if (!v || !v->initializer) continue;
    hidden.emplace_back(v, std::move(*v->initializer));
    v->initializer.reset();
    graph.inputs.push_back(v);
  }
  const Status optimised = optimise(graph, options, providers, out.evidence);
  for (auto& [v, tensor] : hidden) {
    graph.inputs.erase(std::find(graph.inputs.begin(), graph.inputs.end(), v));
    v->initializer = std::move(tensor);
  }
  KILN_RETURN_IF_ERROR(optimised);
  KILN_ASSIGN_OR_RETURN(out.partition, place_lower_and_choose_precision(graph, options, providers, out.evidence));
  return out;
}

}  // namespace

LaterCompilers later_compilers(const CompiledModel& compiled) {
  LaterCompilers later;
  later.variant = [options = compiled.options, providers = compiled.providers](ir::Graph& graph, const std::set<std::string>& packed_weights) {
    return compile_variant(graph, options, providers, packed_weights);
  };
  CompileOptions body_options = compiled.options;
  body_options.optimised = false;  // an artifact's bodies were not: BodyPlans compiles them when planned
  body_options.place = true;
  later.body_precision = std::make_shared<BodyPrecision>();
  later.body = [body_options, providers = compiled.providers,
                precision = later.body_precision](ir::Graph& body) -> Result<partition::PartitionMap> {
    CompileEvidence evidence;
    KILN_RETURN_IF_ERROR(optimise(body, body_options, providers, evidence));
    KILN_ASSIGN_OR_RETURN(partition::PartitionMap placed, place_lower_and_choose_precision(body, body_options, providers, evidence));
    precision->record(evidence.precision.products);
    return placed;
  };
  return later;
}

}  // namespace kiln::compiler
