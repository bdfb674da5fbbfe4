// kiln::Session: a thin facade. A load checks the options once, then reads the model (imported, or
// a compiled one read back from a .kiln artifact), compiles it (compiler/compile.h) and hands the
// compiled model to an engine (engine.h), which plans and runs it: session_load.h lists the
// stages. Every later call goes to that engine; write_artifact writes the compiled model down.
#include "kiln/session.h"

#include <omp.h>

#include <map>

#include "kiln/artifact/builder.h"
#include "kiln/io/file.h"
#include "kiln/runtime/engine.h"
#include "kiln/runtime/session_access.h"
#include "kiln/runtime/session_load.h"

namespace kiln {

struct Session::Impl : runtime::LoadedModel {};

namespace {

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
    auto memory = std::make_shared<MemoryBudget>(options.memory_limit);
    const MemoryBudgetScope budget_scope(memory);
    Result<runtime::LoadedModel> loaded =
        catching_bad_alloc("loading the model", [&] { return runtime::load_model(model_path, bytes, options, memory); });
    if (!loaded.is_ok()) return annotate_allocation_failure(loaded.status(), *memory);
    auto impl = std::make_unique<Impl>();
    static_cast<runtime::LoadedModel&>(*impl) = std::move(loaded).value();
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
report::Report SessionAccess::report(const Session& session) { return session.impl_->engine->current_report(); }

Status Session::write_artifact(const std::string& path, const ArtifactOptions& options) {
  runtime::Engine& engine = *impl_->engine;
  if (engine.mode() == ExecutionMode::kJit)
    return invalid_argument("a jit session holds one compiled variant per input shape; write artifacts from graph mode");
  artifact::ArtifactExtras extras;
  extras.assets = engine.compiled().model.assets;  // the format's own (a GGUF package's tokenizer.gguf)
  for (const auto& [name, asset_path] : options.asset_paths) {
    if (extras.assets.count(name))
      return invalid_argument("asset '" + name + "': the model's format stores an asset of that name; choose another");
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
  extras.kernels = &plan->evidence;
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
