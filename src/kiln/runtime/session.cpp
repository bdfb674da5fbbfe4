// kiln::Session: the pipeline import -> analysis -> passes -> partition -> plan, then runs.
// Each stage is one call below, in order, and records its evidence in the report.
#include "kiln/session.h"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <set>

#include "kiln/analysis/type_inference.h"
#include "kiln/artifact/builder.h"
#include "kiln/artifact/loader.h"
#include "kiln/autodiff/gradient_expansion.h"
#include "kiln/frontend/model_formats.h"
#include "kiln/io/file.h"
#include "kiln/ir/verifier.h"
#include "kiln/partition/partitioner.h"
#include "kiln/passes/half_in_float.h"
#include "kiln/passes/legacy_forms.h"
#include "kiln/codegen/kernel_generator.h"
#include "kiln/providers/tuning.h"
#include "kiln/report/report.h"
#include "kiln/runtime/executor.h"
#include "kiln/runtime/run_lanes.h"
#include "kiln/runtime/input_binding.h"
#include "kiln/runtime/lowering.h"
#include "kiln/runtime/model_summary.h"
#include "kiln/runtime/op_profile.h"
#include "kiln/runtime/shape_padding.h"
#include "kiln/runtime/shape_profile.h"
#include "kiln/runtime/body_plans.h"
#include "kiln/runtime/elapsed.h"
#include "kiln/runtime/shape_specialization.h"
#include "kiln/runtime/variant_cache.h"
#include "kiln/runtime/session_impl.h"
#include "kiln/runtime/warmup.h"
#include "kiln/providers/registry/provider_registry.h"

namespace kiln {

namespace {

std::string join(const std::vector<std::string>& items) {
  std::string s;
  for (const auto& i : items) s += (s.empty() ? "" : ",") + i;
  return s;
}

// `t` (output `info`) cut back along the dims named by padded symbols to their real sizes.
Tensor cut_padding(const TensorInfo& info, const Tensor& t, const std::map<std::string, int64_t>& real) {
  std::vector<int64_t> shape = t.shape();
  bool cut = false;
  for (size_t d = 0; d < shape.size() && d < info.dim_names.size(); ++d) {
    const auto size = real.find(info.dim_names[d]);
    if (size != real.end() && size->second < shape[d]) {
      shape[d] = size->second;
      cut = true;
    }
  }
  return cut && t.dtype() != DType::kString ? runtime::resized_copy(t, shape) : t;
}

}  // namespace

Status Session::Impl::import_model(const std::string& path, const std::string* bytes) {
  const auto start = std::chrono::steady_clock::now();
  if (bytes && artifact::looks_like_artifact(*bytes))
    return invalid_argument("a .kiln artifact loads from its path (Session::load), not from bytes");
  from_artifact = !bytes && artifact::is_artifact_file(path);
  if (from_artifact) {
    KILN_ASSIGN_OR_RETURN(const io::FileImage file, io::read_file_image(path));
    const artifact::LoadPolicy policy{
        options.artifact_public_key.empty() ? std::nullopt : std::optional(options.artifact_public_key),
        options.require_signature, target.features, options.isa};
    Result<artifact::LoadedArtifact> loaded = artifact::load_artifact(file, policy);
    if (!loaded.is_ok()) return loaded.status().with_context(path);
    model = std::move(loaded.value().model);
    assets = std::move(loaded.value().assets);
    warmup_inputs = std::move(loaded.value().warmup_inputs);
    warmup_outputs = std::move(loaded.value().warmup_outputs);
    prepacked = std::move(loaded.value().prepacked);
    artifact_threads = loaded.value().default_threads;
    packed_only = std::move(loaded.value().packed_only);
    generated_code = std::move(loaded.value().generated_code);
    artifact_file = loaded.value().file_owner;
    model.source_path = path;
    model.file_bytes = static_cast<int64_t>(file.bytes.size());
  } else if (bytes) {
    KILN_ASSIGN_OR_RETURN(model, frontend::import_model_bytes(*bytes, "."));
  } else {
    KILN_ASSIGN_OR_RETURN(model, frontend::import_model_file(path));
  }
  metadata = {model.producer_name, model.producer_version, model.domain, model.doc_string, model.graph->name(),
              model.model_version, model.metadata};
  report.model = runtime::summarize_model(model, false);
  report.model.path = bytes ? "<bytes>" : path;
  report.stages.import_ms = ms_since(start);
  return Status::ok();
}

Status Session::Impl::specialize() {
  KILN_ASSIGN_OR_RETURN(auto shapes, runtime::load_time_shapes(*model.graph, options.input_shapes));
  specialized = runtime::pin_input_shapes(*model.graph, shapes);
  return Status::ok();
}

Status Session::Impl::analyse() {
  const auto start = std::chrono::steady_clock::now();
  KILN_ASSIGN_OR_RETURN(report.analysis, analysis::infer_types(*model.graph, ops::OpRegistry::global()));
  // Gradient nodes become ordinary ops, whose types are then inferred.
  KILN_ASSIGN_OR_RETURN(const int gradients, autodiff::expand_gradients(model));
  if (gradients > 0) {
    // The first inference already replaced the stale declarations: its record of them stands.
    std::vector<analysis::DeclarationDisagreement> disagreements = std::move(report.analysis.declaration_disagreements);
    KILN_ASSIGN_OR_RETURN(report.analysis, analysis::infer_types(*model.graph, ops::OpRegistry::global()));
    report.analysis.declaration_disagreements = std::move(disagreements);
  }
  for (const ir::Value* v : model.graph->inputs) inputs.push_back(runtime::tensor_info(*v));
  for (const ir::Value* v : model.graph->outputs) outputs.push_back(runtime::tensor_info(*v));
  report.stages.analysis_ms = ms_since(start);
  return Status::ok();
}

namespace {

// The graph stage of the passes, or (eager mode, --no-optimize) only what a provider without
// float16 kernels needs to place float16 ops: their types lowered all the same.
Result<std::vector<passes::PassRun>> run_graph_passes(ir::Graph& graph, bool half_in_float, bool rewrite,
                                                      const passes::PipelineOptions& pipeline) {
  passes::PassContext ctx{ops::OpRegistry::global()};
  ctx.half_in_float = half_in_float;
  if (rewrite) return passes::run_table_stage(graph, ctx, passes::kGraphStage, pipeline);
  // Without rewrites (eager), the passes that let providers run the graph at all still apply.
  KILN_RETURN_IF_ERROR(passes::modernise_legacy_forms(graph, ctx).status());
  KILN_RETURN_IF_ERROR(passes::compute_half_in_float(graph, ctx).status());
  return std::vector<passes::PassRun>{};
}

}  // namespace

Status Session::Impl::optimise(ir::Graph& graph) {
  const auto start = std::chrono::steady_clock::now();
  const bool half_in_float = providers.front()->graph_preferences().half_in_float;  // the policy's first choice
  KILN_ASSIGN_OR_RETURN(report.passes, run_graph_passes(graph, half_in_float, rewrites(), pipeline_options()));
  report.nodes_after_passes = ir::count_nodes(graph);
  report.stages.passes_ms = ms_since(start);
  return Status::ok();
}

runtime::BodyCompiler Session::Impl::body_compiler() const {
  return [half_in_float = providers.front()->graph_preferences().half_in_float, rewrite = rewrites(),
          pipeline = pipeline_options(), policy = partition::FallbackPolicy{options.providers, options.allow_fallback},
          providers = providers](ir::Graph& body) -> Result<partition::PartitionMap> {
    KILN_RETURN_IF_ERROR(run_graph_passes(body, half_in_float, rewrite, pipeline).status());
    KILN_ASSIGN_OR_RETURN(partition::PartitionMap placed, partition::partition_graph(body, policy, providers));
    if (!rewrite) return placed;
    KILN_ASSIGN_OR_RETURN(std::vector<passes::PassRun> runs,
                          runtime::lower_for_providers(body, placed, providers, policy.preferred.size(), pipeline));
    if (!runtime::any_changed(runs)) return placed;
    return partition::partition_graph(body, policy, providers);
  };
}

passes::PipelineOptions Session::Impl::pipeline_options() const {
  passes::PipelineOptions pipeline;
  pipeline.disabled_passes = options.disabled_passes;
  return pipeline;
}

Result<partition::PartitionMap> Session::Impl::lower(ir::Graph& graph, partition::PartitionMap placed) {
  if (!rewrites()) return placed;
  const auto start = std::chrono::steady_clock::now();
  KILN_ASSIGN_OR_RETURN(std::vector<passes::PassRun> runs,
                        runtime::lower_for_providers(graph, placed, providers, options.providers.size(), pipeline_options()));
  const bool lowered = runtime::any_changed(runs);
  report.passes.insert(report.passes.end(), runs.begin(), runs.end());
  report.nodes_after_passes = ir::count_nodes(graph);
  report.stages.passes_ms += ms_since(start);
  if (!lowered) return placed;
  return place(graph);
}

Status Session::Impl::make_providers() {
  // The policy's providers, then every other one this build has: the partitioner places nodes on
  // the policy's only, and names the others in a refusal when one of them could run the node.
  std::vector<std::string> names = options.providers;
  names.insert(names.end(), options.allow_fallback.begin(), options.allow_fallback.end());
  for (const std::string& name : providers::available_providers())
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  for (size_t i = 0; i < names.size(); ++i) {
    providers::ProviderConfig config{target};
    if (i < options.providers.size() && generates_kernels()) {  // the policy's own providers generate
      config.generate_kernels = true;
      config.embedded_code = generated_code;
    }
    KILN_ASSIGN_OR_RETURN(auto provider, providers::make_provider(names[i], config));
    providers.push_back(std::move(provider));
  }
  const providers::GraphPreferences preferred = providers.front()->graph_preferences();
  report.target.activation_layouts.clear();
  for (const ops::ActivationLayout& layout : preferred.activation_layouts) report.target.activation_layouts.push_back(layout.name());
  report.target.winograd = preferred.winograd;
  return Status::ok();
}

Result<partition::PartitionMap> Session::Impl::place(ir::Graph& graph) {
  const auto start = std::chrono::steady_clock::now();
  const partition::FallbackPolicy policy{options.providers, options.allow_fallback};
  KILN_ASSIGN_OR_RETURN(partition::PartitionMap placed, partition::partition_graph(graph, policy, providers));
  report.partition = placed;
  std::map<std::pair<std::string, std::string>, int64_t> uses;
  for (const auto& a : placed.assignments) ++uses[{a.op_type, a.provider}];
  report.kernels.clear();
  for (const auto& [key, count] : uses) report.kernels.push_back({key.first, key.second, count});
  report.stages.partition_ms = ms_since(start);
  return placed;
}

void Session::Impl::record_plan(const runtime::ExecutionPlan& plan) {
  report::MemorySection& m = report.memory;
  m.input_shapes = plan.input_shapes;
  m.arena_bytes = plan.memory.arena_bytes;
  m.naive_bytes = plan.memory.naive_bytes;
  m.buffers = plan.memory.buffers;
  m.reused_buffers = plan.memory.reused_buffers;
  m.concats_in_place = static_cast<int64_t>(plan.concats_in_place.size());
  m.dynamic_values = plan.dynamic_values;
  m.kernel_reorders = plan.kernel_build.activation_reorders();
  m.output_bytes = runtime::planned_output_bytes(plan);
  // What the session holds besides its runs' arenas (weights, packed copies, outputs kept), plus
  // this plan's arena and outputs.
  int64_t arenas = 0;
  for (size_t lane = 0; lane < lanes.size(); ++lane) arenas += lanes.executor(lane).arena_capacity();
  m.planned_bytes = std::max<int64_t>(0, memory->in_use() - arenas) + m.arena_bytes + m.output_bytes;
  const std::set<std::string>& required = plan.kernel_build.required_features();
  report.target.required_features.assign(required.begin(), required.end());
  report.target.implementations = plan.kernel_build.implementations();
  report.partition.late_declines = plan.late_declines;
  const providers::TuningStats tuned = tuner->stats();
  report::TuningSection& t = report.tuning;
  t = {tuned.enabled, tuned.budget_ms, tuned.spent_ms, tuned.measured, tuned.cache_hits, tuned.cache_corrupted, tuned.cache_foreign, {}};
  for (const providers::TacticChoice& c : tuned.choices) t.choices.push_back({c.node, c.problem, c.chosen, c.source, c.candidate_ms});
  report.stages.tuning_ms = tuned.spent_ms;
  report.target.node_implementations = plan.kernel_build.node_implementations();
}

Result<std::unique_ptr<runtime::ExecutionPlan>> Session::Impl::compile_variant(const runtime::ShapeSignature& shapes) {
  std::unique_ptr<ir::Graph> graph = model.graph->clone();
  runtime::pin_input_shapes(*graph, shapes);
  auto inferred = analysis::infer_types(*graph, ops::OpRegistry::global());
  if (!inferred.is_ok()) return inferred.status().with_context("specialising to the given input shapes");
  KILN_RETURN_IF_ERROR(optimise_variant(*graph));
  KILN_ASSIGN_OR_RETURN(partition::PartitionMap placed, place(*graph));
  KILN_ASSIGN_OR_RETURN(placed, lower(*graph, std::move(placed)));
  return runtime::build_plan(*graph, placed, providers, ops::OpRegistry::global(), shapes, kernel_build(*graph));
}

Status Session::Impl::optimise_variant(ir::Graph& graph) {
  // Their bytes are in a kernel layout: as graph inputs, no pass folds, merges or reads them.
  std::vector<std::pair<ir::Value*, Tensor>> hidden;
  for (const auto& [name, packed] : *packed_in_place) {
    ir::Value* v = graph.find_value(name);
    if (!v || !v->initializer) continue;
    hidden.emplace_back(v, std::move(*v->initializer));
    v->initializer.reset();
    graph.inputs.push_back(v);
  }
  const Status optimised = optimise(graph);
  for (auto& [v, tensor] : hidden) {
    graph.inputs.erase(std::find(graph.inputs.begin(), graph.inputs.end(), v));
    v->initializer = std::move(tensor);
  }
  return optimised;
}

Result<std::shared_ptr<const runtime::ExecutionPlan>> Session::Impl::plan_for(const runtime::ShapeSignature& shapes) {
  if (auto plan = variants.find(shapes)) {
    record_variants();
    return plan;
  }
  const auto start = std::chrono::steady_clock::now();
  std::unique_ptr<runtime::ExecutionPlan> plan;
  if (mode == ExecutionMode::kJit) {
    KILN_ASSIGN_OR_RETURN(plan, compile_variant(shapes));
  } else {
    const auto plan_start = std::chrono::steady_clock::now();
    KILN_ASSIGN_OR_RETURN(plan, plan_loaded_graph(shapes));
    report.stages.plan_ms = ms_since(plan_start);
  }
  record_plan(*plan);
  std::shared_ptr<const runtime::ExecutionPlan> shared = std::move(plan);
  variants.add(shapes, shared);
  const double compile_ms = ms_since(start);
  report::ExecutionSection& e = report.execution;
  e.compile_ms += compile_ms;
  e.recent.push_back({shapes, compile_ms, shared->memory.arena_bytes});
  if (e.recent.size() > report::ExecutionSection::kRecentVariants) e.recent.erase(e.recent.begin());
  record_variants();
  return shared;
}

Result<std::unique_ptr<runtime::ExecutionPlan>> Session::Impl::plan_loaded_graph(const runtime::ShapeSignature& shapes) {
  auto plan = runtime::build_plan(*model.graph, partition, providers, ops::OpRegistry::global(), shapes, kernel_build(*model.graph));
  if (plan.is_ok() || mode != ExecutionMode::kAot || !generated_stats() || plan.status().code() != StatusCode::kUnsupportedTarget)
    return plan;
  return runtime::build_plan(*model.graph, partition, providers, ops::OpRegistry::global(), shapes, kernel_build(*model.graph, false));
}

providers::KernelBuild Session::Impl::kernel_build(const ir::Graph& graph, bool generate) {
  std::vector<providers::PackedConstant> packed = prepacked;
  std::set<std::string> only = packed_only;
  for (const auto& [value, constant] : *packed_in_place) {
    packed.push_back(constant);
    only.insert(value);
  }
  for (const auto& plan : variants.plans())
    for (const auto& [key, constant] : plan->kernel_build.packed()) packed.push_back(constant);
  providers::KernelBuild build(std::move(packed), std::move(only));
  if (!from_artifact && !first_plan_attempted) build.allow_packing_in_place(providers::sole_reader_constants(graph), packed_in_place);
  first_plan_attempted = true;
  if (!generate) build.forbid_generated_kernels();
  const partition::FallbackPolicy policy{options.providers, options.allow_fallback};
  build.set_body_runner(runtime::BodyPlans::runner(
      std::make_shared<runtime::BodyPlans>(policy, providers, ops::OpRegistry::global(), body_compiler())));
  tuner->start_plan();
  build.set_tuner(tuner);
  return build;
}

void Session::Impl::record_variants() {
  report::ExecutionSection& e = report.execution;
  if (const std::optional<codegen::CodegenStats> generated = generated_stats()) {
    const codegen::CodegenStats& g = *generated;
    e.generated = report::ExecutionSection::Generated{g.compiler,     g.cache_folder,      g.cache_writable, g.modules,
                                                      g.kernels,      g.cache_hits,        g.cache_misses,   g.corrupted_entries,
                                                      g.embedded_hits, g.compile_ms,        g.source_bytes};
  }
  const runtime::VariantStats& stats = variants.stats();
  e.variants_built = stats.built;
  e.cache_hits = stats.hits;
  e.cache_misses = stats.misses;
  e.evictions = stats.evictions;
  e.live_variants = static_cast<int64_t>(variants.size());
  std::set<const void*> counted;
  e.packed_in_place_bytes = 0;
  for (const auto& [value, constant] : *packed_in_place) e.packed_in_place_bytes += static_cast<int64_t>(constant.bytes);
  e.packed_weight_bytes = 0;
  for (const auto& plan : variants.plans())
    for (const auto& [key, constant] : plan->kernel_build.packed())
      if (counted.insert(constant.data.get()).second) e.packed_weight_bytes += static_cast<int64_t>(constant.bytes);
}

void Session::Impl::record_options() {
  report.kiln_version = KILN_VERSION;
  report.options = {{"threads", std::to_string(options.threads)},
                    {"providers", join(options.providers)},
                    {"allow_fallback", join(options.allow_fallback)},
                    {"optimize", options.optimize ? "true" : "false"},
                    {"disabled_passes", join(options.disabled_passes)},
                    {"specialize", options.specialize ? "true" : "false"},
                    {"isa", options.isa},
                    {"mode", execution_mode_name(options.mode)},
                    {"max_variants", std::to_string(options.max_variants)},
                    {"tune", options.tune ? "true" : "false"}};
}

Status Session::Impl::set_up_profile() {
  KILN_RETURN_IF_ERROR(runtime::check_shape_profile(*model.graph, options.shape_profile));
  report::GuardSection& g = report.guards;
  for (const auto& [symbol, r] : options.shape_profile)
    g.profile += (g.profile.empty() ? "" : ",") + symbol + "=" + runtime::range_text(r);
  g.policy = options.out_of_profile == OutOfProfile::kReject ? "reject"
             : options.out_of_profile == OutOfProfile::kPad  ? "pad"
                                                               : "specialize";
  return Status::ok();
}

Status Session::Impl::reserve_profile_max() {
  if (options.shape_profile.empty() || options.out_of_profile == OutOfProfile::kSpecialize) return Status::ok();
  std::map<std::string, int64_t> max;
  for (const auto& [symbol, r] : options.shape_profile) max[symbol] = r.max;
  KILN_ASSIGN_OR_RETURN(const runtime::ShapeSignature shapes, runtime::load_time_shapes(*model.graph, options.input_shapes, max));
  KILN_ASSIGN_OR_RETURN(const std::shared_ptr<const runtime::ExecutionPlan> plan, plan_for(shapes));
  report.execution.profile_max_arena_bytes = plan->memory.arena_bytes;
  return lanes.reserve_arena(plan->memory.arena_bytes);
}

Status Session::Impl::guard_profile(const std::map<std::string, Value>& inputs) {
  const auto start = std::chrono::steady_clock::now();
  const std::optional<runtime::GuardViolation> violation = runtime::first_violation(*model.graph, options.shape_profile, inputs);
  report::GuardSection& g = report.guards;
  g.checks += 1;
  g.check_us += ms_since(start) * 1000;
  if (!violation) return Status::ok();
  const bool reject = options.out_of_profile == OutOfProfile::kReject ||
                      (options.out_of_profile == OutOfProfile::kPad && violation->value > violation->range.max);
  g.failures += 1;
  g.recent.push_back({violation->input, violation->symbol, static_cast<int64_t>(violation->dim), violation->value,
                      runtime::range_text(violation->range),
                      reject ? "rejected" : options.out_of_profile == OutOfProfile::kPad ? "padded" : "specialized"});
  if (g.recent.size() > report::GuardSection::kRecentFailures) g.recent.erase(g.recent.begin());
  if (reject) return shape_guard_failure(violation->describe() + " (policy: " + report.guards.policy + ")");
  return Status::ok();
}

Status Session::Impl::choose_mode() {
  mode = options.mode;
  if (from_artifact && (mode == ExecutionMode::kGraph || mode == ExecutionMode::kAot)) {
    mode = ExecutionMode::kAot;  // a compiled graph, planned as it was compiled
  } else if (from_artifact) {
    return invalid_argument(std::string("a .kiln artifact runs in aot mode, not ") + execution_mode_name(mode) +
                            "; give the ONNX model for that mode");
  } else if (mode == ExecutionMode::kAot) {
    return invalid_argument("aot mode runs a .kiln artifact; compile the model first (kiln compile MODEL -o model.kiln)");
  }
  if (mode == ExecutionMode::kJit && options.specialize)
    return invalid_argument("jit mode specialises each call's shapes itself; drop specialize (--specialize)");
  report.execution.mode = execution_mode_name(mode);
  report.execution.max_variants = options.max_variants;
  report.execution.max_concurrent_runs = options.max_concurrent_runs;
  return Status::ok();
}

bool Session::Impl::generates_kernels() const {
  return (mode == ExecutionMode::kAot && !generated_code.empty()) || mode == ExecutionMode::kJit ||
         (mode == ExecutionMode::kGraph && options.generate_kernels);
}

std::optional<codegen::CodegenStats> Session::Impl::generated_stats() const {
  for (const auto& provider : providers)
    if (std::optional<codegen::CodegenStats> stats = provider->generated_stats()) return stats;
  return std::nullopt;
}

Status Session::Impl::choose_target() {
  KILN_ASSIGN_OR_RETURN(target, target::make_target(options.isa));
  if (options.tune && !(options.tune_budget_ms >= 0))
    return invalid_argument("tune_budget_ms must be >= 0, got " + std::to_string(options.tune_budget_ms));
  tuner = options.tune ? providers::Tuner::from_environment(target.describe(), options.tune_budget_ms)
                       : std::make_shared<providers::Tuner>();
  report::TargetSection& t = report.target;
  t.isa = options.isa;
  t.level = target.level;
  t.cpu_features = target.features;
  t.vector_bits = target.vector_bits;
  t.cores = target.cores;
  t.cache_bytes = {target.caches.l1d, target.caches.l2, target.caches.l3};
  t.cpu_vendor = target.cpu.vendor;
  t.cpu_family = target.cpu.family;
  t.cpu_model = target.cpu.model;
  t.cpu_stepping = target.cpu.stepping;
  t.cpu_brand = target.cpu.brand;
  t.cpu_microarchitecture = target.cpu.microarchitecture;
  return Status::ok();
}

const char* execution_mode_name(ExecutionMode mode) {
  switch (mode) {
    case ExecutionMode::kGraph: return "graph";
    case ExecutionMode::kEager: return "eager";
    case ExecutionMode::kJit: return "jit";
    case ExecutionMode::kAot: return "aot";
  }
  return "?";
}

Result<ExecutionMode> parse_execution_mode(const std::string& name) {
  for (ExecutionMode mode : {ExecutionMode::kGraph, ExecutionMode::kEager, ExecutionMode::kJit, ExecutionMode::kAot})
    if (name == execution_mode_name(mode)) return mode;
  return invalid_argument("unknown execution mode '" + name + "' (known: graph, eager, jit, aot)");
}

Result<std::unique_ptr<Session>> Session::load(const std::string& model_path, const SessionOptions& options) {
  return load_model(model_path, nullptr, options);
}

Result<std::unique_ptr<Session>> Session::load_bytes(const std::string& model_bytes, const SessionOptions& options) {
  return load_model("", &model_bytes, options);
}

Result<std::unique_ptr<Session>> Session::load_model(const std::string& model_path, const std::string* bytes,
                                                     const SessionOptions& options) {
  if (options.threads < 0) return invalid_argument("threads must be >= 0, got " + std::to_string(options.threads));
  if (options.max_variants < 1) return invalid_argument("max_variants must be >= 1, got " + std::to_string(options.max_variants));
  if (options.max_loop_iterations < 0)
    return invalid_argument("max_loop_iterations must be >= 0 (0: unbounded), got " + std::to_string(options.max_loop_iterations));
  if (options.max_concurrent_runs < 1)
    return invalid_argument("max_concurrent_runs must be >= 1, got " + std::to_string(options.max_concurrent_runs));
  if (options.memory_limit < 0)
    return invalid_argument("memory_limit must be >= 0 (0: none), got " + std::to_string(options.memory_limit));
  if (options.threads > 0) omp_set_num_threads(options.threads);
  return catching_bad_alloc("loading the model", [&]() -> Result<std::unique_ptr<Session>> {
    auto impl = std::make_unique<Impl>();
    impl->options = options;
    impl->memory = std::make_shared<MemoryBudget>(options.memory_limit);
    const MemoryBudgetScope budget_scope(impl->memory);
    const Status loaded = catching_bad_alloc("loading the model", [&] { return impl->load(model_path, bytes); });
    if (!loaded.is_ok()) return annotate_allocation_failure(loaded, *impl->memory);
    return std::unique_ptr<Session>(new Session(std::move(impl)));
  });
}

Status Session::Impl::load(const std::string& model_path, const std::string* bytes) {
  variants = runtime::VariantCache(static_cast<size_t>(options.max_variants));
  lanes.set_limits(static_cast<size_t>(options.max_concurrent_runs), static_cast<size_t>(options.max_variants));
  report.memory.limit_bytes = options.memory_limit;
  record_options();
  KILN_RETURN_IF_ERROR(choose_target());
  const auto start = std::chrono::steady_clock::now();
  KILN_RETURN_IF_ERROR(import_model(model_path, bytes));
  KILN_RETURN_IF_ERROR(choose_mode());
  if (options.threads == 0 && artifact_threads > 0) {  // the artifact's default
    options.threads = artifact_threads;
    omp_set_num_threads(artifact_threads);
    record_options();
  }
  // An artifact's graph was specialised and optimised when it was compiled.
  if (options.specialize && !from_artifact) KILN_RETURN_IF_ERROR(specialize());
  KILN_RETURN_IF_ERROR(analyse());
  KILN_RETURN_IF_ERROR(make_providers());
  // The passes run once here (an artifact's graph was optimised when it was compiled); jit runs
  // them again on each variant's copy, specialised to its shapes, and partitions that copy.
  if (!from_artifact) KILN_RETURN_IF_ERROR(optimise(*model.graph));
  report.nodes_after_passes = ir::count_nodes(*model.graph);
  if (mode != ExecutionMode::kJit) {
    KILN_ASSIGN_OR_RETURN(partition, place(*model.graph));
    if (!from_artifact) {
      KILN_ASSIGN_OR_RETURN(partition, lower(*model.graph, std::move(partition)));
    }
  }
  KILN_RETURN_IF_ERROR(set_up_profile());
  KILN_RETURN_IF_ERROR(reserve_profile_max());
  const std::map<std::string, int64_t> symbol_values = runtime::profile_defaults(options.shape_profile);
  // An artifact is planned at load for the shapes it was compiled for (its warm-up fixtures'),
  // which its packed weights were packed for, unless shapes are given.
  std::map<std::string, std::vector<int64_t>> planned_shapes = options.input_shapes;
  if (planned_shapes.empty())
    for (const auto& [name, fixture] : warmup_inputs) planned_shapes[name] = fixture.shape();
  KILN_ASSIGN_OR_RETURN(load_shapes, runtime::load_time_shapes(*model.graph, planned_shapes, symbol_values));
  // A guessed dim (a symbolic one planned as 1) may not fit the model (a Conv window over a
  // 1-sample signal): then the first run plans for its real shapes, as ONNX Runtime does.
  const Result<std::shared_ptr<const runtime::ExecutionPlan>> planned = plan_for(load_shapes);
  if (!planned.is_ok()) {
    if (planned.status().code() != StatusCode::kInvalidModel ||
        !runtime::has_guessed_dims(*model.graph, planned_shapes, symbol_values))
      return planned.status();
    report.execution.deferred_load_plan = planned.status().message();
  } else {
    // A plan that cannot run within the memory limit is refused now, not at the first run.
    KILN_RETURN_IF_ERROR(runtime::check_plan_fits_budget(*planned.value(), lanes.size() ? lanes.executor(0).arena_capacity() : 0));
  }
  report.stages.load_ms = ms_since(start);
  return Status::ok();
}

Session::Session(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Session::~Session() = default;

const std::vector<TensorInfo>& Session::inputs() const { return impl_->inputs; }
const std::vector<TensorInfo>& Session::outputs() const { return impl_->outputs; }
const ModelMetadata& Session::metadata() const { return impl_->metadata; }

Result<std::unique_ptr<runtime::ExecutionPlan>> Session::Impl::new_plan(const runtime::ShapeSignature& shapes) {
  if (mode == ExecutionMode::kJit) return compile_variant(shapes);
  return plan_loaded_graph(shapes);
}

Result<std::shared_ptr<const runtime::ExecutionPlan>> Session::Impl::lane_plan(size_t lane, const runtime::ShapeSignature& shapes) {
  if (auto plan = lanes.plans(lane).find(shapes)) return plan;
  KILN_ASSIGN_OR_RETURN(std::shared_ptr<const runtime::ExecutionPlan> plan, new_plan(shapes));
  lanes.plans(lane).add(shapes, plan);
  report.execution.lane_plans_built += 1;
  return plan;
}

Result<ops::RunLimits> Session::Impl::begin_run(const RunOptions& run_options) const {
  const int threads = run_options.threads > 0 ? run_options.threads : options.threads;
  if (threads > 0) omp_set_num_threads(threads);
  if (!(run_options.timeout_ms >= 0))
    return invalid_argument("timeout_ms must be >= 0, got " + std::to_string(run_options.timeout_ms));
  ops::RunLimits limits;
  limits.terminate = &run_options.terminate;
  limits.max_loop_iterations = options.max_loop_iterations;
  if (run_options.timeout_ms > 0) {
    limits.timeout_ms = run_options.timeout_ms;
    limits.deadline = std::chrono::steady_clock::now() +
                      std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                          std::chrono::duration<double, std::milli>(run_options.timeout_ms));
  }
  return limits;
}

void Session::Impl::record_run(bool request, double ms, std::vector<runtime::StepTiming>& timings,
                               std::shared_ptr<const runtime::ExecutionPlan> plan) {
  if (request) {
    report.run.record(ms);
    runtime::accumulate_op_times(timings, report.run.op_times);
  }
  std::swap(last_timings, timings);
  last_kernels.reset();
  last_plan = std::move(plan);  // the kernel events of last_timings point into it
}

namespace {

// Hands a run's lane back when the run ends, however it ends (with the session's lock held).
struct LaneLease {
  runtime::RunLanes& lanes;
  std::unique_lock<std::mutex>& lock;
  size_t lane;
  ~LaneLease() {
    if (!lock.owns_lock()) lock.lock();
    lanes.release(lane);
  }
};

}  // namespace

Result<std::map<std::string, Value>> Session::Impl::execute(const std::map<std::string, Value>& given, bool request,
                                                            const RunOptions& run_options, const runtime::StepObserver& observer) {
  return catching_bad_alloc("running", [&] { return run_in_lane(given, request, run_options, observer); });
}

Result<std::map<std::string, Value>> Session::Impl::run_in_lane(const std::map<std::string, Value>& given, bool request,
                                                                const RunOptions& run_options,
                                                                const runtime::StepObserver& observer) {
  KILN_ASSIGN_OR_RETURN(const ops::RunLimits limits, begin_run(run_options));
  const MemoryBudgetScope budget_scope(memory);
  std::unique_lock<std::mutex> lock(mutex);
  KILN_RETURN_IF_ERROR(runtime::check_specialized_shapes(specialized, given));
  if (!options.shape_profile.empty()) KILN_RETURN_IF_ERROR(guard_profile(given));
  std::optional<runtime::PaddedRun> padded;
  if (!options.shape_profile.empty() && options.out_of_profile == OutOfProfile::kPad) {
    KILN_ASSIGN_OR_RETURN(padded, runtime::pad_to_buckets(*model.graph, options.shape_profile, given));
    if (padded->padded_elements > 0) {
      report.guards.padded_runs += 1;
      report.guards.real_elements += padded->real_elements;
      report.guards.padded_elements += padded->padded_elements;
    }
  }
  const std::map<std::string, Value>& inputs = padded ? padded->inputs : given;
  KILN_ASSIGN_OR_RETURN(std::vector<Value> ordered, runtime::bind_inputs(*model.graph, inputs));
  runtime::ShapeSignature shapes;
  for (const Value& v : ordered) shapes.push_back(v.is_tensor() ? v.tensor().shape() : std::vector<int64_t>{});
  const LaneLease lease{lanes, lock, lanes.acquire(lock)};
  report.execution.lanes = static_cast<int64_t>(lanes.size());
  KILN_ASSIGN_OR_RETURN(const std::shared_ptr<const runtime::ExecutionPlan> plan,
                        lease.lane == 0 ? plan_for(shapes) : lane_plan(lease.lane, shapes));
  // Found under the lock: another run may add a lane (moving the lane list) while this one runs.
  runtime::Executor& executor = lanes.executor(lease.lane);
  lock.unlock();
  std::vector<runtime::StepTiming> timings;
  const auto start = std::chrono::steady_clock::now();
  Result<std::vector<Value>> results = executor.run(*plan, ordered, &timings, observer, &limits);
  const double elapsed = ms_since(start);
  if (!results.is_ok()) {
    const Status failed = annotate_allocation_failure(results.status(), *memory);
    return run_options.tag.empty() ? failed : failed.with_context("run '" + run_options.tag + "'");
  }
  std::map<std::string, Value> named;
  for (size_t i = 0; i < results.value().size(); ++i) {
    Value& result = results.value()[i];
    if (padded && result.is_tensor()) result = Value(cut_padding(outputs[i], result.tensor(), padded->symbols));
    named[model.graph->outputs[i]->name] = std::move(result);
  }
  lock.lock();
  record_run(request, elapsed, timings, plan);
  return named;
}

Result<std::map<std::string, Tensor>> Session::Impl::execute_tensors(const std::map<std::string, Tensor>& inputs, bool request,
                                                                     const RunOptions& run_options, const runtime::StepObserver& observer) {
  return catching_bad_alloc("running", [&]() -> Result<std::map<std::string, Tensor>> {
    KILN_ASSIGN_OR_RETURN(auto outputs, execute({inputs.begin(), inputs.end()}, request, run_options, observer));
    std::map<std::string, Tensor> tensors;
    for (auto& [name, value] : outputs) {
      if (!value.is_tensor())
        return invalid_argument("output '" + name + "' is a " + value.describe() + "; use Session::run_values");
      tensors[name] = std::move(value.tensor());
    }
    return tensors;
  });
}

namespace {
const RunOptions& default_run_options() {
  static const RunOptions options;
  return options;
}
}  // namespace

Result<std::map<std::string, Tensor>> Session::run(const std::map<std::string, Tensor>& inputs) {
  return impl_->execute_tensors(inputs, true, default_run_options());
}

Result<std::map<std::string, Tensor>> Session::run(const std::map<std::string, Tensor>& inputs, const RunOptions& run_options) {
  return impl_->execute_tensors(inputs, true, run_options);
}

Result<std::map<std::string, Value>> Session::run_values(const std::map<std::string, Value>& inputs) {
  return impl_->execute(inputs, true, default_run_options());
}

Result<std::map<std::string, Value>> Session::run_values(const std::map<std::string, Value>& inputs, const RunOptions& run_options) {
  return impl_->execute(inputs, true, run_options);
}

Result<std::map<std::string, Tensor>> Session::run_observed(const std::map<std::string, Tensor>& inputs,
                                                            const ValueObserver& observer) {
  return impl_->execute_tensors(inputs, true, default_run_options(), [&observer](const runtime::Step& step, const std::vector<Value>& values) {
    for (size_t i = 0; i < step.outputs.size(); ++i) {
      const int slot = step.outputs[i];
      if (slot >= 0 && values[static_cast<size_t>(slot)].is_tensor())
        observer(step.node->name, step.node->outputs[i]->name, values[static_cast<size_t>(slot)].tensor());
    }
  });
}

Status Session::warm_up(const std::map<std::string, Tensor>& inputs, int runs) {
  return warm_up(inputs, runs, default_run_options());
}

Status Session::warm_up(const std::map<std::string, Tensor>& inputs, int runs, const RunOptions& run_options) {
  if (runs < 1) return invalid_argument("warm-up runs must be >= 1, got " + std::to_string(runs));
  // The fixtures and load shapes are fixed at load: no lock is needed to read them.
  std::map<std::string, Tensor> fixtures = inputs;
  const bool recorded = inputs.empty() && !impl_->warmup_inputs.empty();
  if (recorded) fixtures = impl_->warmup_inputs;
  if (fixtures.empty()) {
    KILN_ASSIGN_OR_RETURN(fixtures, runtime::generated_fixture_inputs(*impl_->model.graph, impl_->load_shapes));
  }
  std::optional<runtime::WarmupCheck> check;
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < runs; ++i) {
    KILN_ASSIGN_OR_RETURN(auto outputs, impl_->execute_tensors(fixtures, false, run_options));
    if (recorded && i == 0) {
      KILN_ASSIGN_OR_RETURN(check, runtime::check_fixture_outputs(impl_->warmup_outputs, outputs));
    }
  }
  impl_->record_warmup(!inputs.empty() ? "given" : recorded ? "artifact" : "generated", runs, check, ms_since(start));
  return Status::ok();
}

Status Session::warm_up_values(const std::map<std::string, Value>& inputs, int runs, const RunOptions& run_options) {
  if (inputs.empty()) return warm_up({}, runs, run_options);
  if (runs < 1) return invalid_argument("warm-up runs must be >= 1, got " + std::to_string(runs));
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < runs; ++i) KILN_RETURN_IF_ERROR(impl_->execute(inputs, false, run_options).status());
  impl_->record_warmup("given", runs, std::nullopt, ms_since(start));
  return Status::ok();
}

void Session::Impl::record_warmup(const char* fixtures, int runs, const std::optional<runtime::WarmupCheck>& check,
                                  double ms) {
  const std::lock_guard<std::mutex> lock(mutex);
  report::WarmupSection& w = report.warmup;
  w.fixtures = fixtures;
  w.runs += runs;
  if (check) {
    w.checked = true;
    w.max_relative_error = check->max_relative_error;
  }
  w.ms += ms;
  w.state = "ready";
  state = SessionState::kReady;
}

SessionState Session::state() const { return impl_->state; }

const std::vector<KernelEvent>& Session::last_run_kernels() const {
  const std::lock_guard<std::mutex> lock(impl_->mutex);
  if (!impl_->last_kernels) {
    std::vector<KernelEvent>& events = impl_->last_kernels.emplace();
    for (const runtime::StepTiming& t : impl_->last_timings) {
      const runtime::ExecutionPlan* plan = t.plan ? t.plan.get() : impl_->last_plan.get();  // a body's, or the run's
      const std::map<std::string, std::string>* implementations = plan ? &plan->kernel_build.node_implementations() : nullptr;
      const auto it = implementations ? implementations->find(t.node->name) : std::map<std::string, std::string>::const_iterator{};
      const std::string implementation = implementations && it != implementations->end() ? it->second : "";
      events.push_back({t.node->op_type, t.node->name, t.node->source_nodes(), *t.provider, implementation, t.start_ms, t.ms,
                        t.self_ms(), t.calls, t.depth, t.parent ? t.parent->name : ""});
    }
  }
  return *impl_->last_kernels;
}

void Session::record_parity(const ParityResult& parity) {
  const std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->report.parity.push_back(parity);
}

report::Report Session::Impl::current_report() const {
  report::Report now = report;
  now.memory.in_use_bytes = memory->in_use();
  now.memory.peak_bytes = memory->peak();
  return now;
}

std::string Session::report_json(int indent) const {
  const std::lock_guard<std::mutex> lock(impl_->mutex);
  return report::to_json(impl_->current_report(), indent);
}

std::string Session::report_summary() const {
  const std::lock_guard<std::mutex> lock(impl_->mutex);
  return report::to_summary(impl_->current_report());
}

Status Session::write_artifact(const std::string& path, const ArtifactOptions& options) {
  if (impl_->mode == ExecutionMode::kJit)
    return invalid_argument("a jit session holds one compiled variant per input shape; write artifacts from graph mode");
  artifact::ArtifactExtras extras;
  for (const auto& [name, asset_path] : options.asset_paths) {
    Result<std::string> bytes = io::read_file(asset_path);
    if (!bytes.is_ok()) return bytes.status().with_context("asset '" + name + "'");
    extras.assets[name] = std::move(bytes).value();
  }
  extras.warmup_inputs = options.warmup_inputs;
  if (extras.warmup_inputs.empty()) {
    KILN_ASSIGN_OR_RETURN(extras.warmup_inputs, runtime::generated_fixture_inputs(*impl_->model.graph, impl_->load_shapes));
  }
  std::shared_ptr<const runtime::ExecutionPlan> plan;
  {
    const std::lock_guard<std::mutex> lock(impl_->mutex);
    KILN_ASSIGN_OR_RETURN(plan, impl_->plan_for(impl_->load_shapes));
  }
  extras.input_shapes = plan->input_shapes;
  extras.kernels = &plan->kernel_build;
  KILN_ASSIGN_OR_RETURN(extras.warmup_outputs, impl_->execute_tensors(extras.warmup_inputs, false, default_run_options()));
  const providers::GraphPreferences preferred = impl_->providers.front()->graph_preferences();
  artifact::CompileRecord record{KILN_VERSION, impl_->options.isa, impl_->target, {}, preferred.winograd, impl_->options.threads};
  for (const ops::ActivationLayout& layout : preferred.activation_layouts) record.activation_layouts.push_back(layout.name());
  std::string bytes;
  {
    const std::lock_guard<std::mutex> lock(impl_->mutex);
    record.evidence = report::reproducible_sections(impl_->report);
    KILN_ASSIGN_OR_RETURN(bytes, artifact::build_artifact(impl_->model, record, extras));
  }
  return io::write_file_atomic(path, bytes);
}

Result<std::string> Session::asset(const std::string& name) const {
  const auto it = impl_->assets.find(name);
  if (it != impl_->assets.end()) return it->second;
  std::string known;
  for (const auto& entry : impl_->assets) known += (known.empty() ? "" : ", ") + entry.first;
  return not_found("no asset '" + name + "' in this model (it has: " + (known.empty() ? "none" : known) + ")");
}

}  // namespace kiln
