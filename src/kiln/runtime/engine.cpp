// The engine's plans, lanes and runs (see engine.h).
#include "kiln/runtime/engine.h"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <set>

#include "kiln/ir/elapsed.h"
#include "kiln/runtime/body_plans.h"
#include "kiln/runtime/input_binding.h"
#include "kiln/runtime/model_summary.h"
#include "kiln/runtime/op_profile.h"
#include "kiln/runtime/plan_memory.h"
#include "kiln/runtime/shape_profile.h"

namespace kiln::runtime {

namespace {

report::PrecisionSection::Product product_precision(const compiler::NodePrecision& p) {
  return {p.node,
          p.op_type,
          ops::precision_name(p.precision),
          p.reason,
          p.sources,
          p.weight_levels,
          p.input,
          p.calibrated ? p.calibrated->scale : 0.0f,
          p.calibrated ? p.calibrated->zero_point : 0,
          p.residual,
          p.residual_quantization ? p.residual_quantization->scale : 0.0f,
          p.residual_quantization ? p.residual_quantization->zero_point : 0};
}

}  // namespace

void record_compile(report::Report& report, const compiler::CompileEvidence& evidence) {
  report.passes = evidence.passes;
  report.nodes_after_passes = evidence.nodes_after_passes;
  report.stages.passes_ms = evidence.passes_ms;
  report.partition = evidence.partition;
  std::map<std::pair<std::string, std::string>, int64_t> uses;
  for (const auto& a : evidence.partition.assignments) ++uses[{a.op_type, a.provider}];
  report.kernels.clear();
  for (const auto& [key, count] : uses) report.kernels.push_back({key.first, key.second, count});
  report.stages.partition_ms = evidence.partition_ms;
  const compiler::PrecisionEvidence& precision = evidence.precision;
  report.precision.requested = ops::preference_name(precision.requested);
  report.precision.keep_fp32 = precision.keep_fp32;
  report.precision.reduced = precision.reduced;
  report.precision.bf16_values = precision.bf16_values;
  report.precision.uint8_values = precision.uint8_values;
  report.precision.products.clear();
  for (const compiler::NodePrecision& p : precision.products) report.precision.products.push_back(product_precision(p));
}

Engine::Engine(compiler::CompiledModel compiled, EngineStart start)
    : compiled_(std::move(compiled)),
      compilers_(std::move(start.compilers)),
      options_(std::move(start.options)),
      mode_(start.mode),
      memory_(std::move(start.memory)),
      tuner_(std::move(start.tuner)),
      warmup_inputs_(std::move(start.warmup_inputs)),
      warmup_outputs_(std::move(start.warmup_outputs)),
      variants_(static_cast<size_t>(options_.max_variants)),
      report_(std::move(start.report)) {
  lanes_.set_limits(static_cast<size_t>(options_.max_concurrent_runs), static_cast<size_t>(options_.max_variants));
  for (const ir::Value* v : graph().inputs) inputs_.push_back(tensor_info(*v));
  for (const ir::Value* v : graph().outputs) outputs_.push_back(tensor_info(*v));
}

Result<std::unique_ptr<Engine>> Engine::start(compiler::CompiledModel compiled, EngineStart start) {
  const std::chrono::steady_clock::time_point start_time = start.load_start;
  KILN_ASSIGN_OR_RETURN(ShapePolicy policy, ShapePolicy::make(*compiled.model.graph, start.options, std::move(start.pinned)));
  std::unique_ptr<Engine> engine(new Engine(std::move(compiled), std::move(start)));
  engine->shape_policy_ = std::move(policy);
  const compiler::CompileEvidence& evidence = engine->compiled_.evidence;
  engine->report_.analysis = evidence.analysis;
  engine->report_.stages.analysis_ms = evidence.analysis_ms;
  record_compile(engine->report_, evidence);
  const ops::GraphPreferences preferred =
      engine->compiled_.providers.front()->graph_preferences(engine->compiled_.options.precision.preference);
  for (const ops::ActivationLayout& layout : preferred.activation_layouts)
    engine->report_.target.activation_layouts.push_back(layout.name());
  engine->report_.target.winograd = preferred.prefers(ops::GraphForm::kWinograd);
  const std::lock_guard<std::mutex> lock(engine->mutex_);
  KILN_RETURN_IF_ERROR(engine->plan_at_load(start_time));
  return engine;
}

Status Engine::plan_at_load(std::chrono::steady_clock::time_point load_start) {
  if (const std::optional<std::map<std::string, int64_t>> max = shape_policy_.bounded_max()) {
    KILN_ASSIGN_OR_RETURN(const ShapeSignature shapes, load_time_shapes(graph(), options_.input_shapes, *max));
    KILN_ASSIGN_OR_RETURN(const std::shared_ptr<const ExecutionPlan> plan, plan_for(shapes));
    report_.execution.profile_max_arena_bytes = plan->memory.arena_bytes;
    KILN_RETURN_IF_ERROR(lanes_.reserve_arena(plan->memory.arena_bytes));
  }
  const std::map<std::string, int64_t> symbol_values = profile_defaults(options_.shape_profile);
  // An artifact is planned at load for the shapes it was compiled for (its warm-up fixtures'),
  // which its packed weights were packed for, unless shapes are given.
  std::map<std::string, std::vector<int64_t>> planned_shapes = options_.input_shapes;
  if (planned_shapes.empty())
    for (const auto& [name, fixture] : warmup_inputs_) planned_shapes[name] = fixture.shape();
  KILN_ASSIGN_OR_RETURN(load_shapes_, load_time_shapes(graph(), planned_shapes, symbol_values));
  // A guessed dim (a symbolic one planned as 1) may not fit the model (a Conv window over a
  // 1-sample signal): then the first run plans for its real shapes, as ONNX Runtime does.
  const Result<std::shared_ptr<const ExecutionPlan>> planned = plan_for(load_shapes_);
  if (!planned.is_ok()) {
    if (planned.status().code() != StatusCode::kInvalidModel ||
        !has_guessed_dims(graph(), planned_shapes, symbol_values))
      return planned.status();
    report_.execution.deferred_load_plan = planned.status().message();
  } else {
    // A plan that cannot run within the memory limit is refused now, not at the first run.
    KILN_RETURN_IF_ERROR(check_plan_fits_budget(*planned.value(), lanes_.size() ? lanes_.executor(0).arena_capacity() : 0));
  }
  report_.stages.load_ms = ms_since(load_start);
  return Status::ok();
}

Result<std::shared_ptr<const ExecutionPlan>> Engine::load_plan() {
  const std::lock_guard<std::mutex> lock(mutex_);
  return plan_for(load_shapes_);
}

Result<std::map<std::string, Tensor>> Engine::generated_inputs() const {
  if (!compiled_.model.example_inputs.empty()) return compiled_.model.example_inputs;
  return generated_fixture_inputs(graph(), load_shapes_);
}

Status Engine::check_stream_inputs(const std::map<std::string, Value>& inputs) {
  const std::lock_guard<std::mutex> lock(mutex_);
  return shape_policy_.check(graph(), inputs);
}

Result<std::shared_ptr<const ExecutionPlan>> Engine::stream_plan(const ShapeSignature& shapes) {
  const std::lock_guard<std::mutex> lock(mutex_);
  KILN_ASSIGN_OR_RETURN(std::shared_ptr<const ExecutionPlan> plan, new_plan(shapes));
  report_.execution.stream_plans_built += 1;
  return plan;
}

void Engine::count_stream() {
  const std::lock_guard<std::mutex> lock(mutex_);
  report_.execution.streams += 1;
}

nlohmann::json Engine::reproducible_evidence() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return report::reproducible_sections(report_);
}

void Engine::record_parity(const ParityResult& parity) {
  const std::lock_guard<std::mutex> lock(mutex_);
  report_.parity.push_back(parity);
}

void Engine::record_plan(const ExecutionPlan& plan) {
  report::MemorySection& m = report_.memory;
  m.input_shapes = plan.input_shapes;
  m.arena_bytes = plan.memory.arena_bytes;
  m.naive_bytes = plan.memory.naive_bytes;
  m.buffers = plan.memory.buffers;
  m.reused_buffers = plan.memory.reused_buffers;
  m.concats_in_place = static_cast<int64_t>(plan.concats_in_place.size());
  m.dynamic_values = plan.dynamic_values;
  m.kernel_reorders = plan.evidence.activation_reorders();
  m.output_bytes = planned_output_bytes(plan);
  // What the session holds besides its runs' arenas (weights, packed copies, outputs kept), plus
  // this plan's arena and outputs.
  int64_t arenas = 0;
  for (size_t lane = 0; lane < lanes_.size(); ++lane) arenas += lanes_.executor(lane).arena_capacity();
  m.planned_bytes = std::max<int64_t>(0, memory_->in_use() - arenas) + m.arena_bytes + m.output_bytes;
  const std::set<std::string>& required = plan.evidence.required_features();
  report_.target.required_features.assign(required.begin(), required.end());
  report_.target.implementations = plan.evidence.implementations();
  report_.partition.late_declines = plan.late_declines;
  const providers::TuningStats tuned = tuner_->stats();
  report::TuningSection& t = report_.tuning;
  t = {tuned.enabled, tuned.budget_ms, tuned.spent_ms, tuned.measured, tuned.cache_hits, tuned.cache_corrupted, tuned.cache_foreign, {}};
  for (const providers::TacticChoice& c : tuned.choices) t.choices.push_back({c.node, c.problem, c.chosen, c.source, c.candidate_ms});
  report_.stages.tuning_ms = tuned.spent_ms;
  report_.target.node_implementations = plan.evidence.node_implementations();
}

Result<std::unique_ptr<ExecutionPlan>> Engine::compile_variant(const ShapeSignature& shapes) {
  std::unique_ptr<ir::Graph> graph = compiled_.model.graph->clone();
  pin_input_shapes(*graph, shapes);
  std::set<std::string> packed_weights;
  for (const auto& [name, packed] : *packed_in_place_) packed_weights.insert(name);
  KILN_ASSIGN_OR_RETURN(const compiler::CompiledGraph variant, compilers_.variant(*graph, packed_weights));
  record_compile(report_, variant.evidence);
  return build_plan(*graph, variant.partition, compiled_.providers, ops::OpRegistry::global(), shapes, plan_context(*graph));
}

Result<std::shared_ptr<const ExecutionPlan>> Engine::plan_for(const ShapeSignature& shapes) {
  if (auto plan = variants_.find(shapes)) {
    record_variants();
    return plan;
  }
  const auto start = std::chrono::steady_clock::now();
  std::unique_ptr<ExecutionPlan> plan;
  if (mode_ == ExecutionMode::kJit) {
    KILN_ASSIGN_OR_RETURN(plan, compile_variant(shapes));
  } else {
    const auto plan_start = std::chrono::steady_clock::now();
    KILN_ASSIGN_OR_RETURN(plan, plan_compiled_graph(shapes));
    report_.stages.plan_ms = ms_since(plan_start);
  }
  record_plan(*plan);
  std::shared_ptr<const ExecutionPlan> shared = std::move(plan);
  variants_.add(shapes, shared);
  const double compile_ms = ms_since(start);
  report::ExecutionSection& e = report_.execution;
  e.compile_ms += compile_ms;
  e.recent.push_back({shapes, compile_ms, shared->memory.arena_bytes});
  if (e.recent.size() > report::ExecutionSection::kRecentVariants) e.recent.erase(e.recent.begin());
  record_variants();
  return shared;
}

Result<std::unique_ptr<ExecutionPlan>> Engine::plan_compiled_graph(const ShapeSignature& shapes) {
  const ir::Graph& g = graph();
  auto plan = build_plan(g, compiled_.partition, compiled_.providers, ops::OpRegistry::global(), shapes, plan_context(g));
  if (plan.is_ok() || mode_ != ExecutionMode::kAot || !generated_code() || plan.status().code() != StatusCode::kUnsupportedTarget)
    return plan;
  return build_plan(g, compiled_.partition, compiled_.providers, ops::OpRegistry::global(), shapes, plan_context(g, false));
}

providers::PlanContext Engine::plan_context(const ir::Graph& graph, bool generate) {
  std::vector<providers::PackedConstant> packed = compiled_.precompiled.packed;
  std::set<std::string> only = compiled_.precompiled.packed_only;
  for (const auto& [value, constant] : *packed_in_place_) {
    packed.push_back(constant);
    only.insert(value);
  }
  for (const auto& plan : variants_.plans())
    for (const auto& [key, constant] : plan->evidence.packed()) packed.push_back(constant);
  providers::PlanContext context(std::move(packed), std::move(only));
  if (!compiled_.options.optimised && !first_plan_attempted_)
    context.allow_packing_in_place(providers::sole_reader_constants(graph), packed_in_place_);
  first_plan_attempted_ = true;
  if (!generate) context.forbid_generated_kernels();
  context.set_body_runner(BodyPlans::runner(std::make_shared<BodyPlans>(
      compiled_.options.policy, compiled_.providers, ops::OpRegistry::global(), compilers_.body)));
  tuner_->start_plan();
  context.set_tuner(tuner_);
  return context;
}

void Engine::record_variants() {
  report::ExecutionSection& e = report_.execution;
  if (const std::optional<providers::GeneratedCodeEvidence> generated = generated_code()) {
    const providers::GeneratedCodeEvidence& g = *generated;
    e.generated = report::ExecutionSection::Generated{g.compiler,     g.cache_folder,      g.cache_writable, g.modules,
                                                      g.kernels,      g.cache_hits,        g.cache_misses,   g.corrupted_entries,
                                                      g.embedded_hits, g.compile_ms,        g.source_bytes};
  }
  const VariantStats& stats = variants_.stats();
  e.variants_built = stats.built;
  e.cache_hits = stats.hits;
  e.cache_misses = stats.misses;
  e.evictions = stats.evictions;
  e.live_variants = static_cast<int64_t>(variants_.size());
  std::set<const void*> counted;
  e.packed_in_place_bytes = 0;
  for (const auto& [value, constant] : *packed_in_place_) e.packed_in_place_bytes += static_cast<int64_t>(constant.bytes);
  e.packed_weight_bytes = 0;
  for (const auto& plan : variants_.plans())
    for (const auto& [key, constant] : plan->evidence.packed())
      if (counted.insert(constant.data.get()).second) e.packed_weight_bytes += static_cast<int64_t>(constant.bytes);
}

std::optional<providers::GeneratedCodeEvidence> Engine::generated_code() const {
  for (const auto& provider : compiled_.providers)
    if (std::optional<providers::GeneratedCodeEvidence> stats = provider->generated_code()) return stats;
  return std::nullopt;
}

Result<std::unique_ptr<ExecutionPlan>> Engine::new_plan(const ShapeSignature& shapes) {
  if (mode_ == ExecutionMode::kJit) return compile_variant(shapes);
  return plan_compiled_graph(shapes);
}

Result<std::shared_ptr<const ExecutionPlan>> Engine::lane_plan(size_t lane, const ShapeSignature& shapes) {
  if (auto plan = lanes_.plans(lane).find(shapes)) return plan;
  KILN_ASSIGN_OR_RETURN(std::shared_ptr<const ExecutionPlan> plan, new_plan(shapes));
  lanes_.plans(lane).add(shapes, plan);
  report_.execution.lane_plans_built += 1;
  return plan;
}

Result<ops::RunLimits> Engine::begin_run(const RunOptions& run_options) const {
  const int threads = run_options.threads > 0 ? run_options.threads : options_.threads;
  if (threads > 0) omp_set_num_threads(threads);
  if (!(run_options.timeout_ms >= 0))
    return invalid_argument("timeout_ms must be >= 0, got " + std::to_string(run_options.timeout_ms));
  ops::RunLimits limits;
  limits.terminate = &run_options.terminate;
  limits.max_loop_iterations = options_.max_loop_iterations;
  if (run_options.timeout_ms > 0) {
    limits.timeout_ms = run_options.timeout_ms;
    limits.deadline = std::chrono::steady_clock::now() +
                      std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                          std::chrono::duration<double, std::milli>(run_options.timeout_ms));
  }
  return limits;
}

void Engine::record_run(bool request, double ms, std::vector<StepTiming>& timings, std::shared_ptr<const ExecutionPlan> plan) {
  const std::lock_guard<std::mutex> lock(mutex_);
  if (request) {
    report_.run.record(ms);
    accumulate_op_times(timings, report_.run.op_times);
  }
  std::swap(last_timings_, timings);
  last_kernels_.reset();
  last_plan_ = std::move(plan);  // the kernel events of last_timings_ point into it
}

Result<std::map<std::string, Value>> Engine::execute(const std::map<std::string, Value>& given, bool request,
                                                            const RunOptions& run_options, const StepObserver& observer) {
  return catching_bad_alloc("running", [&] { return run_in_lane(given, request, run_options, observer); });
}

namespace {

// Hands a run's lane back when the run ends, however it ends (with the engine's lock held).
struct LaneLease {
  RunLanes& lanes;
  std::unique_lock<std::mutex>& lock;
  size_t lane;
  ~LaneLease() {
    if (!lock.owns_lock()) lock.lock();
    lanes.release(lane);
  }
};

}  // namespace

Result<std::map<std::string, Value>> Engine::run_in_lane(const std::map<std::string, Value>& given, bool request,
                                                                const RunOptions& run_options,
                                                                const StepObserver& observer) {
  KILN_ASSIGN_OR_RETURN(const ops::RunLimits limits, begin_run(run_options));
  const MemoryBudgetScope budget_scope(memory_);
  std::unique_lock<std::mutex> lock(mutex_);
  KILN_ASSIGN_OR_RETURN(const std::optional<PaddedRun> padded, shape_policy_.admit(graph(), given));
  const std::map<std::string, Value>& inputs = padded ? padded->inputs : given;
  KILN_ASSIGN_OR_RETURN(std::vector<Value> ordered, bind_inputs(graph(), inputs));
  ShapeSignature shapes;
  for (const Value& v : ordered) shapes.push_back(v.is_tensor() ? v.tensor().shape() : std::vector<int64_t>{});
  const LaneLease lease{lanes_, lock, lanes_.acquire(lock)};
  report_.execution.lanes = static_cast<int64_t>(lanes_.size());
  KILN_ASSIGN_OR_RETURN(const std::shared_ptr<const ExecutionPlan> plan,
                        lease.lane == 0 ? plan_for(shapes) : lane_plan(lease.lane, shapes));
  // Found under the lock: another run may add a lane (moving the lane list) while this one runs.
  Executor& executor = lanes_.executor(lease.lane);
  lock.unlock();
  std::vector<StepTiming> timings;
  const auto start = std::chrono::steady_clock::now();
  Result<std::vector<Value>> results = executor.run(*plan, ordered, &timings, observer, &limits);
  const double elapsed = ms_since(start);
  if (!results.is_ok()) {
    const Status failed = annotate_allocation_failure(results.status(), *memory_);
    return run_options.tag.empty() ? failed : failed.with_context("run '" + run_options.tag + "'");
  }
  std::map<std::string, Value> named;
  for (size_t i = 0; i < results.value().size(); ++i) {
    Value& result = results.value()[i];
    if (padded) result = ShapePolicy::cut_padding(outputs_[i], std::move(result), *padded);
    named[graph().outputs[i]->name] = std::move(result);
  }
  record_run(request, elapsed, timings, plan);
  return named;
}

Result<std::map<std::string, Tensor>> Engine::execute_tensors(const std::map<std::string, Tensor>& inputs, bool request,
                                                                     const RunOptions& run_options, const StepObserver& observer) {
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

Status Engine::warm_up(const std::map<std::string, Tensor>& inputs, int runs, const RunOptions& run_options) {
  if (runs < 1) return invalid_argument("warm-up runs must be >= 1, got " + std::to_string(runs));
  std::map<std::string, Tensor> fixtures = inputs;
  const bool recorded = inputs.empty() && !warmup_inputs_.empty();
  if (recorded) fixtures = warmup_inputs_;
  if (fixtures.empty()) {
    KILN_ASSIGN_OR_RETURN(fixtures, generated_inputs());
  }
  std::optional<WarmupCheck> check;
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < runs; ++i) {
    KILN_ASSIGN_OR_RETURN(auto outputs, execute_tensors(fixtures, false, run_options));
    if (recorded && i == 0) {
      KILN_ASSIGN_OR_RETURN(check, check_fixture_outputs(warmup_outputs_, outputs));
    }
  }
  record_warmup(!inputs.empty() ? "given" : recorded ? "artifact" : "generated", runs, check, ms_since(start));
  return Status::ok();
}

Status Engine::warm_up_values(const std::map<std::string, Value>& inputs, int runs, const RunOptions& run_options) {
  if (inputs.empty()) return warm_up({}, runs, run_options);
  if (runs < 1) return invalid_argument("warm-up runs must be >= 1, got " + std::to_string(runs));
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < runs; ++i) KILN_RETURN_IF_ERROR(execute(inputs, false, run_options).status());
  record_warmup("given", runs, std::nullopt, ms_since(start));
  return Status::ok();
}

void Engine::record_accuracy(report::PrecisionSection measured) {
  const std::lock_guard<std::mutex> lock(mutex_);
  report::PrecisionSection& p = report_.precision;
  p.validation_inputs = std::move(measured.validation_inputs);
  p.validation_count = measured.validation_count;
  p.validation_sha256 = std::move(measured.validation_sha256);
  p.accuracy = std::move(measured.accuracy);
  p.fallback = std::move(measured.fallback);
  p.calibration = std::move(measured.calibration);
}

void Engine::record_precision_trials(std::vector<std::string> trials) {
  const std::lock_guard<std::mutex> lock(mutex_);
  report_.precision.auto_trials = std::move(trials);
}

void Engine::record_warmup(const char* fixtures, int runs, const std::optional<WarmupCheck>& check,
                                  double ms) {
  const std::lock_guard<std::mutex> lock(mutex_);
  report::WarmupSection& w = report_.warmup;
  w.fixtures = fixtures;
  w.runs += runs;
  if (check) {
    w.checked = true;
    w.max_relative_error = check->max_relative_error;
  }
  w.ms += ms;
  w.state = "ready";
  state_ = SessionState::kReady;
}

const std::vector<KernelEvent>& Engine::last_run_kernels() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  if (!last_kernels_) {
    std::vector<KernelEvent>& events = last_kernels_.emplace();
    for (const StepTiming& t : last_timings_) {
      const ExecutionPlan* plan = t.plan ? t.plan.get() : last_plan_.get();  // a body's, or the run's
      const std::map<std::string, std::string>* implementations = plan ? &plan->evidence.node_implementations() : nullptr;
      const auto it = implementations ? implementations->find(t.node->name) : std::map<std::string, std::string>::const_iterator{};
      const std::string implementation = implementations && it != implementations->end() ? it->second : "";
      events.push_back({t.node->op_type, t.node->name, t.node->source_nodes(), *t.provider, implementation, t.start_ms, t.ms,
                        t.self_ms(), t.calls, t.depth, t.parent ? t.parent->name : ""});
    }
  }
  return *last_kernels_;
}

report::Report Engine::current_report() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  report::Report now = report_;
  now.guards = shape_policy_.evidence();
  now.memory.in_use_bytes = memory_->in_use();
  now.memory.peak_bytes = memory_->peak();
  if (compilers_.body_precision)  // control-flow bodies compiled so far
    for (const compiler::NodePrecision& p : compilers_.body_precision->products()) {
      now.precision.products.push_back(product_precision(p));
      now.precision.reduced += p.precision != ops::Precision::kFp32;
    }
  return now;
}


}  // namespace kiln::runtime
