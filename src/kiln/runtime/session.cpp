// kiln::Session: a thin facade over the pipeline. A load validates the options, imports the model
// (or reads a compiled one from a .kiln artifact), compiles it (compiler/compile.h) and hands the
// compiled model to an engine (engine.h), which plans and runs it; the session's calls go to that
// engine. The stages of a load are the calls of Load::run below, in order.
#include "kiln/session.h"

#include <omp.h>

#include <chrono>
#include <map>
#include <mutex>
#include <optional>

#include "kiln/artifact/builder.h"
#include "kiln/compiler/compile.h"
#include "kiln/io/file.h"
#include "kiln/ir/elapsed.h"
#include "kiln/runtime/engine.h"
#include "kiln/runtime/input_binding.h"
#include "kiln/runtime/model_source.h"
#include "kiln/runtime/model_summary.h"
#include "kiln/runtime/shape_specialization.h"

namespace kiln {

struct Session::Impl {
  std::unique_ptr<runtime::Engine> engine;
  ModelMetadata metadata;                     // as imported, before any pass
  std::map<std::string, std::string> assets;  // an artifact's, by name
};

namespace {

// One load: its stages and what they hand each other on the way to the engine.
struct Load {
  explicit Load(const SessionOptions& options)
      : options(options), memory(std::make_shared<MemoryBudget>(options.memory_limit)) {}

  SessionOptions options;
  std::shared_ptr<MemoryBudget> memory;
  target::Target target;
  std::shared_ptr<providers::Tuner> tuner;
  ExecutionMode mode = ExecutionMode::kGraph;
  runtime::SourceModel source;
  runtime::EngineStart engine;  // its report is the load's until the engine takes it
  // What the session keeps besides the source's assets: the model's metadata as imported, the engine.
  ModelMetadata metadata;
  std::unique_ptr<runtime::Engine> started;

  Status run(const std::string& path, const std::string* bytes) {
    engine.report.memory.limit_bytes = options.memory_limit;
    record_options();
    KILN_RETURN_IF_ERROR(choose_target());
    engine.load_start = std::chrono::steady_clock::now();
    KILN_RETURN_IF_ERROR(import_model(path, bytes));
    KILN_RETURN_IF_ERROR(choose_mode());
    if (options.threads == 0 && source.default_threads > 0) {  // the artifact's default
      options.threads = source.default_threads;
      omp_set_num_threads(options.threads);
      record_options();
    }
    // An artifact's graph was specialised and optimised when it was compiled.
    if (options.specialize && !source.from_artifact) {
      KILN_ASSIGN_OR_RETURN(auto shapes, runtime::load_time_shapes(*source.model.graph, options.input_shapes));
      engine.pinned = runtime::pin_input_shapes(*source.model.graph, shapes);
    }
    const compiler::CompileOptions compile = compile_options();
    KILN_ASSIGN_OR_RETURN(partition::ProviderList providers,
                          compiler::make_providers(compile.policy, target, generates_kernels(), source.precompiled.generated_code));
    // The passes run once here (an artifact's graph was optimised when it was compiled); jit runs
    // them again on each variant's copy, specialised to its shapes, and places that copy.
    KILN_ASSIGN_OR_RETURN(compiler::CompiledModel compiled,
                          compiler::compile(std::move(source.model), compile, target, std::move(providers), std::move(source.precompiled)));
    engine.warmup_inputs = std::move(source.warmup_inputs);
    engine.warmup_outputs = std::move(source.warmup_outputs);
    engine.options = options;
    engine.mode = mode;
    engine.memory = memory;
    engine.tuner = tuner;
    KILN_ASSIGN_OR_RETURN(started, runtime::Engine::start(std::move(compiled), std::move(engine)));
    return Status::ok();
  }

  // The model at `path` (or in `bytes`): imported, or read back from an artifact under the
  // options' signature policy and the target's CPU features.
  Status import_model(const std::string& path, const std::string* bytes) {
    const auto start = std::chrono::steady_clock::now();
    const artifact::LoadPolicy policy{
        options.artifact_public_key.empty() ? std::nullopt : std::optional(options.artifact_public_key),
        options.require_signature, target.features, options.isa};
    KILN_ASSIGN_OR_RETURN(source, runtime::read_model(path, bytes, policy));
    const ir::Model& model = source.model;
    metadata = {model.producer_name, model.producer_version, model.domain, model.doc_string, model.graph->name(),
                model.model_version, model.metadata};
    engine.report.model = runtime::summarize_model(model, false);
    engine.report.model.path = bytes ? "<bytes>" : path;
    engine.report.stages.import_ms = ms_since(start);
    return Status::ok();
  }

  Status choose_mode() {
    mode = options.mode;
    if (source.from_artifact && (mode == ExecutionMode::kGraph || mode == ExecutionMode::kAot)) {
      mode = ExecutionMode::kAot;  // a compiled graph, planned as it was compiled
    } else if (source.from_artifact) {
      return invalid_argument(std::string("a .kiln artifact runs in aot mode, not ") + execution_mode_name(mode) +
                              "; give the ONNX model for that mode");
    } else if (mode == ExecutionMode::kAot) {
      return invalid_argument("aot mode runs a .kiln artifact; compile the model first (kiln compile MODEL -o model.kiln)");
    }
    if (mode == ExecutionMode::kJit && options.specialize)
      return invalid_argument("jit mode specialises each call's shapes itself; drop specialize (--specialize)");
    engine.report.execution.mode = execution_mode_name(mode);
    engine.report.execution.max_variants = options.max_variants;
    engine.report.execution.max_concurrent_runs = options.max_concurrent_runs;
    return Status::ok();
  }
  compiler::CompileOptions compile_options() const {
    compiler::CompileOptions o;
    o.policy = {options.providers, options.allow_fallback};
    o.pipeline.disabled_passes = options.disabled_passes;
    o.rewrite = options.optimize && mode != ExecutionMode::kEager;
    o.optimised = source.from_artifact;            // optimised when it was compiled
    o.place = mode != ExecutionMode::kJit;  // jit places each variant for its shapes
    return o;
  }

  // Whether kernels are generated from loop IR: jit, graph with generate_kernels, and an artifact
  // that embeds generated kernels (the providers that can generate them do).
  bool generates_kernels() const {
    return (mode == ExecutionMode::kAot && !source.precompiled.generated_code.empty()) || mode == ExecutionMode::kJit ||
           (mode == ExecutionMode::kGraph && options.generate_kernels);
  }

  void record_options() {
    engine.report.kiln_version = KILN_VERSION;
    engine.report.options = report::options_section(options);
  }
  Status choose_target() {
    KILN_ASSIGN_OR_RETURN(target, target::make_target(options.isa));
    if (options.tune && !(options.tune_budget_ms >= 0))
      return invalid_argument("tune_budget_ms must be >= 0, got " + std::to_string(options.tune_budget_ms));
    tuner = options.tune ? providers::Tuner::from_environment(target.describe(), options.tune_budget_ms)
                         : std::make_shared<providers::Tuner>();
    engine.report.target = report::target_section(target, options.isa);
    return Status::ok();
  }
};

const RunOptions& default_run_options() {
  static const RunOptions options;
  return options;
}

}  // namespace

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
    Load load(options);
    const MemoryBudgetScope budget_scope(load.memory);
    const Status loaded = catching_bad_alloc("loading the model", [&] { return load.run(model_path, bytes); });
    if (!loaded.is_ok()) return annotate_allocation_failure(loaded, *load.memory);
    auto impl = std::make_unique<Impl>();
    impl->engine = std::move(load.started);
    impl->metadata = std::move(load.metadata);
    impl->assets = std::move(load.source.assets);
    return std::unique_ptr<Session>(new Session(std::move(impl)));
  });
}
Session::Session(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Session::~Session() = default;

const std::vector<TensorInfo>& Session::inputs() const { return impl_->engine->inputs(); }
const std::vector<TensorInfo>& Session::outputs() const { return impl_->engine->outputs(); }
const ModelMetadata& Session::metadata() const { return impl_->metadata; }
SessionState Session::state() const { return impl_->engine->state(); }

Result<std::map<std::string, Tensor>> Session::run(const std::map<std::string, Tensor>& inputs) {
  return impl_->engine->execute_tensors(inputs, true, default_run_options());
}

Result<std::map<std::string, Tensor>> Session::run(const std::map<std::string, Tensor>& inputs, const RunOptions& run_options) {
  return impl_->engine->execute_tensors(inputs, true, run_options);
}

Result<std::map<std::string, Value>> Session::run_values(const std::map<std::string, Value>& inputs) {
  return impl_->engine->execute(inputs, true, default_run_options());
}

Result<std::map<std::string, Value>> Session::run_values(const std::map<std::string, Value>& inputs, const RunOptions& run_options) {
  return impl_->engine->execute(inputs, true, run_options);
}

Result<std::map<std::string, Tensor>> Session::run_observed(const std::map<std::string, Tensor>& inputs,
                                                            const ValueObserver& observer) {
  return impl_->engine->execute_tensors(inputs, true, default_run_options(), [&observer](const runtime::Step& step, const std::vector<Value>& values) {
    for (size_t i = 0; i < step.outputs.size(); ++i) {
      const int slot = step.outputs[i];
      if (slot >= 0 && values[static_cast<size_t>(slot)].is_tensor())
        observer(step.node->name, step.node->outputs[i]->name, values[static_cast<size_t>(slot)].tensor());
    }
  });
}

Status Session::warm_up(const std::map<std::string, Tensor>& inputs, int runs) {
  return impl_->engine->warm_up(inputs, runs, default_run_options());
}

Status Session::warm_up(const std::map<std::string, Tensor>& inputs, int runs, const RunOptions& run_options) {
  return impl_->engine->warm_up(inputs, runs, run_options);
}

Status Session::warm_up_values(const std::map<std::string, Value>& inputs, int runs, const RunOptions& run_options) {
  return impl_->engine->warm_up_values(inputs, runs, run_options);
}

Result<std::unique_ptr<Stream>> Session::open_stream() { return Stream::open(*impl_->engine); }

const std::vector<KernelEvent>& Session::last_run_kernels() const { return impl_->engine->last_run_kernels(); }
void Session::record_parity(const ParityResult& parity) { impl_->engine->record_parity(parity); }
std::string Session::report_json(int indent) const { return report::to_json(impl_->engine->current_report(), indent); }
std::string Session::report_summary() const { return report::to_summary(impl_->engine->current_report()); }

Status Session::write_artifact(const std::string& path, const ArtifactOptions& options) {
  runtime::Engine& engine = *impl_->engine;
  if (engine.mode() == ExecutionMode::kJit)
    return invalid_argument("a jit session holds one compiled variant per input shape; write artifacts from graph mode");
  artifact::ArtifactExtras extras;
  for (const auto& [name, asset_path] : options.asset_paths) {
    Result<std::string> bytes = io::read_file(asset_path);
    if (!bytes.is_ok()) return bytes.status().with_context("asset '" + name + "'");
    extras.assets[name] = std::move(bytes).value();
  }
  extras.warmup_inputs = options.warmup_inputs;
  if (extras.warmup_inputs.empty()) {
    KILN_ASSIGN_OR_RETURN(extras.warmup_inputs, engine.generated_inputs());
  }
  KILN_ASSIGN_OR_RETURN(const std::shared_ptr<const runtime::ExecutionPlan> plan, engine.load_plan());
  extras.input_shapes = plan->input_shapes;
  extras.kernels = &plan->kernel_build;
  KILN_ASSIGN_OR_RETURN(extras.warmup_outputs, engine.execute_tensors(extras.warmup_inputs, false, default_run_options()));
  artifact::CompileRecord record;
  record.kiln_version = KILN_VERSION;
  record.isa = engine.options().isa;
  record.threads = engine.options().threads;
  record.evidence = engine.reproducible_evidence();
  KILN_ASSIGN_OR_RETURN(const std::string bytes, artifact::build_artifact(engine.compiled(), record, extras));
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
