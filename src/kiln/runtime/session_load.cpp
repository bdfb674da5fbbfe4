// The stages of a session's load (see session_load.h).
#include "kiln/runtime/session_load.h"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <sstream>
#include <optional>
#include <set>

#include "kiln/compiler/compile.h"
#include "kiln/ir/elapsed.h"
#include "kiln/runtime/activation_calibration.h"
#include "kiln/runtime/input_binding.h"
#include "kiln/runtime/model_source.h"
#include "kiln/runtime/model_summary.h"
#include "kiln/runtime/precision_accuracy.h"
#include "kiln/runtime/shape_specialization.h"

namespace kiln::runtime {
namespace {

// The accuracy check's fixed side: the validation inputs and the float32 model's outputs on them.
struct Validation {
  std::string kind;     // "given", "calibration" or "generated"
  std::string context;  // of a failed run's error
  std::vector<std::map<std::string, Tensor>> inputs;
  std::vector<Outputs> expected;

  // Each output of `reduced` on the inputs against the float32 model's (compare_outputs).
  Result<std::vector<report::OutputAccuracy>> measure(Engine& reduced) const {
    std::vector<Outputs> got;
    for (const auto& set : inputs) {
      Result<Outputs> have = reduced.execute_tensors(set, false, RunOptions{});
      if (!have.is_ok()) return have.status().with_context(context);
      got.push_back(std::move(have).value());
    }
    return compare_outputs(expected, got);
  }
};

// The most products the accuracy fallback measures one by one; beyond, it measures that many groups
// of consecutive products (each a load of the model and runs of the validation inputs).
constexpr size_t kMaxFallbackUnits = 16;

// One load: its stages and what they hand each other on the way to the engine.
struct Load {
  Load(const SessionOptions& options, std::shared_ptr<MemoryBudget> memory) : options(options), memory(std::move(memory)) {}

  SessionOptions options;
  std::shared_ptr<MemoryBudget> memory;
  target::Target target;
  compiler::PrecisionOptions precision;
  std::vector<std::string> precision_fallback;  // source nodes the accuracy fallback keeps in float32
  std::map<std::string, ops::Uint8Quantization> calibrated_inputs;  // static int8: by product input
  report::PrecisionSection::Calibration calibration;                // and how they were calibrated
  AccuracyBudget budget;
  std::shared_ptr<providers::Tuner> tuner;
  ExecutionMode mode = ExecutionMode::kGraph;
  SourceModel source;
  EngineStart engine;  // its report is the load's until the engine takes it
  // What the session keeps besides the source's assets: the model's metadata as imported, the engine.
  ModelMetadata metadata;
  std::unique_ptr<Engine> started;

  // The stages, then (a reduced precision, not an artifact's) the accuracy check.
  Status run(const std::string& path, const std::string* bytes) {
    KILN_RETURN_IF_ERROR(start(path, bytes));
    if (!options.calibration_inputs.empty()) {
      if (source.from_artifact)
        return invalid_argument("an artifact keeps the input scales it was compiled with; calibration inputs apply when compiling the model");
      if (std::find(precision.preference.begin(), precision.preference.end(), ops::Precision::kInt8) == precision.preference.end())
        return invalid_argument("calibration inputs calibrate int8 products; precision is " + ops::preference_name(precision.preference));
    }
    if (!reduced() || source.from_artifact) return Status::ok();
    if (!options.calibration_inputs.empty()) KILN_RETURN_IF_ERROR(calibrate(path, bytes));
    return check_accuracy(path, bytes);
  }

  // Another load's engine (and what the session keeps with it) becomes this one's.
  void adopt(Load& other) {
    started = std::move(other.started);
    metadata = std::move(other.metadata);
    source.assets = std::move(other.source.assets);
  }

  // Static int8: the model with every product in float32 (the same graph the int8 compile lowered
  // to: the same precision preference, every product kept) runs on the calibration sets; the
  // products' inputs, and the residuals they sum (which may be kept uint8 too), are calibrated
  // (runtime/activation_calibration.h) and the model loads again with them fixed. Every product's,
  // not only those the first load made int8: one reduced only between kept values (Provider::
  // computes_where_kept) is int8 only once the values around it are calibrated.
  Status calibrate(const std::string& path, const std::string* bytes) {
    const std::optional<ops::CalibrationMethod> method = ops::parse_calibration_method(options.calibration_method);
    std::set<std::string> product_inputs;
    Load float32(options, memory);
    for (const report::PrecisionSection::Product& p : started->current_report().precision.products) {
      product_inputs.insert(p.input);
      if (!p.residual.empty()) product_inputs.insert(p.residual);
      float32.precision_fallback.insert(float32.precision_fallback.end(), p.sources.begin(), p.sources.end());
    }
    KILN_RETURN_IF_ERROR(float32.start(path, bytes));
    std::vector<std::map<std::string, Tensor>> sets;
    for (const InputSet& set : options.calibration_inputs) sets.push_back(set.tensors);
    calibration.method = options.calibration_method;
    calibration.count = static_cast<int64_t>(sets.size());
    KILN_ASSIGN_OR_RETURN(calibration.sha256, validation_sha256(sets));
    KILN_ASSIGN_OR_RETURN(calibrated_inputs, calibrate_inputs(*float32.started, product_inputs, options.calibration_inputs, *method));
    Load calibrated(options, memory);
    calibrated.calibrated_inputs = calibrated_inputs;
    KILN_RETURN_IF_ERROR(calibrated.start(path, bytes));
    adopt(calibrated);
    for (const report::PrecisionSection::Product& p : started->current_report().precision.products)
      calibration.calibrated_products += p.input_scale > 0;
    return Status::ok();
  }

  Status start(const std::string& path, const std::string* bytes) {
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
      KILN_ASSIGN_OR_RETURN(auto shapes, load_time_shapes(*source.model.graph, options.input_shapes));
      engine.pinned = pin_input_shapes(*source.model.graph, shapes);
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
    engine.options.validation_inputs.clear();  // read by this load's accuracy check only
    engine.mode = mode;
    engine.memory = memory;
    engine.tuner = tuner;
    engine.compilers = compiler::later_compilers(compiled);
    KILN_ASSIGN_OR_RETURN(started, Engine::start(std::move(compiled), std::move(engine)));
    return Status::ok();
  }

  // The reduced-precision model against the same model loaded in float32 on the validation inputs
  // (precision_accuracy.h), recorded in the report and held to the budget: a breach fails the load,
  // or under on_budget "fallback" keeps the most sensitive products in float32 (fall_back).
  Status check_accuracy(const std::string& path, const std::string* bytes) {
    KILN_ASSIGN_OR_RETURN(const Validation validation, validate(path, bytes));
    report::PrecisionSection measured;
    measured.calibration = calibration;
    measured.validation_inputs = validation.kind;
    measured.validation_count = static_cast<int64_t>(validation.inputs.size());
    KILN_ASSIGN_OR_RETURN(measured.validation_sha256, validation_sha256(validation.inputs));
    KILN_ASSIGN_OR_RETURN(measured.accuracy, validation.measure(*started));
    const bool scores = std::any_of(measured.accuracy.begin(), measured.accuracy.end(),
                                    [](const report::OutputAccuracy& a) { return a.top1 >= 0; });
    if ((budget.min_top1 || budget.min_top5) && !scores)
      return invalid_argument("the accuracy budget '" + options.accuracy_budget +
                              "' limits top-k agreement, but no output looks like class scores ([N, C])");
    std::optional<std::string> breach = budget_breach(budget, measured.accuracy);
    if (breach && options.on_budget == kOnBudgetFallback) {
      KILN_RETURN_IF_ERROR(fall_back(path, bytes, validation, measured));
      breach = budget_breach(budget, measured.accuracy);
    }
    started->record_accuracy(std::move(measured));
    if (breach)
      return Status(StatusCode::kNumericalIssue, "precision " + ops::preference_name(precision.preference) +
                                                     " breaks the accuracy budget '" + options.accuracy_budget + "': " + *breach);
    return Status::ok();
  }

  // The validation inputs (given, else generated for the load-time shapes) and the float32 model's
  // outputs on them.
  Result<Validation> validate(const std::string& path, const std::string* bytes) {
    Validation validation;
    for (const InputSet& set : options.validation_inputs) {
      KILN_RETURN_IF_ERROR(check_input_set(started->graph(), set));
      validation.inputs.push_back(set.tensors);
    }
    validation.kind = "given";
    validation.context = "accuracy check";
    if (validation.inputs.empty() && !options.calibration_inputs.empty()) {
      for (const InputSet& set : options.calibration_inputs) validation.inputs.push_back(set.tensors);  // checked by calibrate()
      validation.kind = "calibration";
    }
    if (validation.inputs.empty()) {
      KILN_ASSIGN_OR_RETURN(Outputs generated, started->generated_inputs());
      validation.inputs.push_back(std::move(generated));
      validation.kind = "generated";
      validation.context = "accuracy check on generated inputs of the load-time shapes (give validation inputs: --validation DIR)";
    }
    SessionOptions float32 = options;
    float32.precision = ops::precision_name(ops::Precision::kFp32);
    float32.keep_fp32.clear();
    float32.validation_inputs.clear();
    float32.accuracy_budget.clear();
    float32.on_budget = kOnBudgetFail;
    float32.calibration_inputs.clear();
    KILN_ASSIGN_OR_RETURN(LoadedModel reference, load_model(path, bytes, float32, memory));
    for (const auto& set : validation.inputs) {
      Result<Outputs> want = reference.engine->execute_tensors(set, false, RunOptions{});
      if (!want.is_ok()) return want.status().with_context(validation.context);
      validation.expected.push_back(std::move(want).value());
    }
    return validation;
  }

  // on_budget "fallback", the budget broken: each reduced product measured alone (every other one
  // kept in float32; beyond kMaxFallbackUnits products, groups of consecutive products, so that the
  // search costs a bounded number of loads) and ranked by the share of the budget it uses; every
  // product in float32 must keep the budget (else it is impossible); then the fewest of the most
  // sensitive kept in float32 that keep it, by bisection on their count. One that breaks the budget
  // alone is taken to break it with others reduced too, so those are always kept. This load's
  // engine becomes the one chosen, and `measured` its accuracy, with every step in
  // measured.fallback.
  Status fall_back(const std::string& path, const std::string* bytes, const Validation& validation, report::PrecisionSection& measured) {
    // What is measured alone and kept together: a product, or a group of consecutive ones.
    struct Unit {
      std::vector<std::string> products, sources;
      double usage = 0;  // of the budget, reduced alone
      std::string label() const {
        return products.size() == 1 ? "'" + products[0] + "'"
                                    : "'" + products.front() + "' .. '" + products.back() + "' (" + std::to_string(products.size()) + " products)";
      }
    };
    // The reduced products as the report lists them: the graph's (jit: the variant's the validation
    // inputs ran) and those of the control-flow bodies the runs reached, in that order.
    std::vector<const report::PrecisionSection::Product*> reduced;
    const report::Report now = started->current_report();
    for (const report::PrecisionSection::Product& p : now.precision.products)
      if (p.precision != ops::precision_name(ops::Precision::kFp32)) reduced.push_back(&p);
    const size_t groups = std::min(reduced.size(), kMaxFallbackUnits);
    std::vector<Unit> units(groups);
    for (size_t i = 0; i < reduced.size(); ++i) {
      Unit& unit = units[i * groups / reduced.size()];
      unit.products.push_back(reduced[i]->node);
      unit.sources.insert(unit.sources.end(), reduced[i]->sources.begin(), reduced[i]->sources.end());
    }
    std::vector<std::string>& steps = measured.fallback;
    steps.push_back("breach with every product reduced: " + *budget_breach(budget, measured.accuracy));
    if (groups < reduced.size())
      steps.push_back(std::to_string(reduced.size()) + " products measured in " + std::to_string(groups) + " groups of consecutive ones");
    struct Trial {
      std::unique_ptr<Load> load;
      std::vector<report::OutputAccuracy> accuracy;
    };
    const auto trial = [&](std::vector<std::string> kept) -> Result<Trial> {
      Trial t{std::make_unique<Load>(options, memory), {}};
      t.load->precision_fallback = std::move(kept);
      t.load->calibrated_inputs = calibrated_inputs;
      KILN_RETURN_IF_ERROR(t.load->start(path, bytes));
      KILN_ASSIGN_OR_RETURN(t.accuracy, validation.measure(*t.load->started));
      return t;
    };
    for (Unit& unit : units) {
      std::vector<std::string> others;
      for (const Unit& other : units)
        if (&other != &unit) others.insert(others.end(), other.sources.begin(), other.sources.end());
      KILN_ASSIGN_OR_RETURN(const Trial alone, trial(std::move(others)));
      unit.usage = budget_usage(budget, alone.accuracy);
      steps.push_back(unit.label() + " reduced alone uses " + measure_text(unit.usage) + " of the budget");
    }
    std::stable_sort(units.begin(), units.end(), [](const Unit& a, const Unit& b) { return a.usage > b.usage; });
    const auto most_sensitive = [&](size_t count) {
      std::vector<std::string> kept;
      for (size_t i = 0; i < count; ++i) kept.insert(kept.end(), units[i].sources.begin(), units[i].sources.end());
      return kept;
    };
    KILN_ASSIGN_OR_RETURN(Trial best, trial(most_sensitive(units.size())));
    if (const std::optional<std::string> breach = budget_breach(budget, best.accuracy))
      return Status(StatusCode::kNumericalIssue, "the accuracy budget '" + options.accuracy_budget +
                                                     "' is impossible: with every product in fp32 it still breaks (" + *breach +
                                                     "): the model's float32 runs differ from each other");
    const auto breaking_alone = static_cast<size_t>(std::count_if(units.begin(), units.end(), [](const Unit& u) { return u.usage > 1; }));
    if (breaking_alone > 0) steps.push_back(std::to_string(breaking_alone) + " break the budget alone");
    size_t low = breaking_alone == 0 ? 0 : breaking_alone - 1, high = units.size();  // low breaks the budget, high keeps it
    while (high - low > 1) {
      const size_t count = (low + high) / 2;
      KILN_ASSIGN_OR_RETURN(Trial t, trial(most_sensitive(count)));
      const bool holds = !budget_breach(budget, t.accuracy);
      steps.push_back("the " + std::to_string(count) + " most sensitive in fp32: " + (holds ? "holds" : "breaks"));
      if (holds) {
        high = count;
        best = std::move(t);
      } else {
        low = count;
      }
    }
    std::string kept;
    size_t kept_products = 0;
    for (size_t i = 0; i < high; ++i) {
      for (const std::string& product : units[i].products) kept += (kept.empty() ? "" : ", ") + product;
      kept_products += units[i].products.size();
    }
    steps.push_back("fallback kept " + std::to_string(kept_products) + " of " + std::to_string(reduced.size()) + " products in fp32: " + kept);
    adopt(*best.load);
    measured.accuracy = std::move(best.accuracy);
    return Status::ok();
  }

  // The model at `path` (or in `bytes`): imported, or read back from an artifact under the
  // options' signature policy and the target's CPU features.
  Status import_model(const std::string& path, const std::string* bytes) {
    const auto start = std::chrono::steady_clock::now();
    const artifact::LoadPolicy policy{
        options.artifact_public_key.empty() ? std::nullopt : std::optional(options.artifact_public_key),
        options.require_signature, target.features, options.isa};
    KILN_ASSIGN_OR_RETURN(source, read_model(path, bytes, policy));
    const ir::Model& model = source.model;
    metadata = {model.producer_name, model.producer_version, model.domain, model.doc_string, model.graph->name(),
                model.model_version, model.metadata};
    engine.report.model = summarize_model(model, false);
    engine.report.model.path = bytes ? "<bytes>" : path;
    engine.report.memory.mapped_bytes = ir::parameter_stats(*model.graph, model.mapped_file).mapped_bytes;
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
    o.precision = precision;
    o.precision.fallback_source_nodes = precision_fallback;
    o.precision.calibrated_inputs = calibrated_inputs;
    return o;
  }

  // Whether kernels are generated from loop IR: jit, graph with generate_kernels, and an artifact
  // that embeds generated kernels (the providers that can generate them do).
  bool generates_kernels() const {
    return (mode == ExecutionMode::kAot && !source.precompiled.generated_code.empty()) || mode == ExecutionMode::kJit ||
           (mode == ExecutionMode::kGraph && options.generate_kernels);
  }

  bool reduced() const {
    return std::any_of(precision.preference.begin(), precision.preference.end(), [](ops::Precision p) { return p != ops::Precision::kFp32; });
  }

  void record_options() {
    engine.report.kiln_version = KILN_VERSION;
    engine.report.options = report::options_section(options);
  }
  Status choose_target() {
    KILN_ASSIGN_OR_RETURN(target, target::make_target(options.isa));
    const std::optional<std::vector<ops::Precision>> asked = ops::parse_preference(options.precision);
    if (!asked)
      return invalid_argument("precision '" + options.precision + "': choose one of " + ops::precision_names() +
                              ", auto, or a preference such as int8+bf16");
    precision = {*asked, options.keep_fp32, {}, {}, {}};
    KILN_ASSIGN_OR_RETURN(budget, parse_accuracy_budget(options.accuracy_budget));
    if (!budget.empty() && !reduced())
      return invalid_argument("an accuracy budget needs a reduced precision (precision is fp32)");
    if (options.on_budget != kOnBudgetFail && options.on_budget != kOnBudgetFallback)
      return invalid_argument("on_budget '" + options.on_budget + "': choose " + kOnBudgetFail + " or " + kOnBudgetFallback);
    if (options.on_budget == kOnBudgetFallback && budget.empty() && reduced())
      return invalid_argument("on_budget fallback needs an accuracy budget to keep (accuracy_budget)");
    if (!ops::parse_calibration_method(options.calibration_method))
      return invalid_argument("calibration_method '" + options.calibration_method + "': choose one of " + ops::calibration_method_names());
    if (options.tune && !(options.tune_budget_ms >= 0))
      return invalid_argument("tune_budget_ms must be >= 0, got " + std::to_string(options.tune_budget_ms));
    tuner = options.tune ? providers::Tuner::from_environment(target.describe(), options.tune_budget_ms)
                         : std::make_shared<providers::Tuner>();
    engine.report.target = report::target_section(target, options.isa);
    return Status::ok();
  }
};

}  // namespace

// The fastest of three runs of `engine` on `inputs` (after one untimed run), in ms.
Result<double> best_run_ms(Engine& engine, const std::map<std::string, Tensor>& inputs) {
  double best = HUGE_VAL;
  for (int run = 0; run < 4; ++run) {
    const auto start = std::chrono::steady_clock::now();
    KILN_RETURN_IF_ERROR(engine.execute_tensors(inputs, false, RunOptions{}).status());
    if (run > 0) best = std::min(best, ms_since(start));
  }
  return best;
}

// precision "auto": fp32 and the reduced precisions this target has (int8 matrix products with bf16
// convolutions, and bf16 alone, where it has bf16; int8 alone otherwise), each reduced one held to
// the accuracy budget (the given one, else kAutoAccuracyBudget) and each timed on the first
// validation input set (the fastest of 3 runs); the fastest that keeps the budget is kept. Every
// trial, with its time, is in the report's precision section.
Result<LoadedModel> load_automatic(const std::string& path, const std::string* bytes, const SessionOptions& options,
                                   const std::shared_ptr<MemoryBudget>& memory) {
  KILN_ASSIGN_OR_RETURN(const target::Target target, target::make_target(options.isa));
  std::vector<std::string> candidates = {ops::precision_name(ops::Precision::kFp32)};
  for (const char* reduced : target.bf16() ? std::vector<const char*>{"int8+bf16", "bf16"} : std::vector<const char*>{"int8"})
    candidates.push_back(reduced);
  std::vector<std::string> trials;
  std::optional<LoadedModel> best;
  double best_ms = HUGE_VAL;
  std::string chosen;
  for (const std::string& candidate : candidates) {
    SessionOptions trial = options;
    trial.precision = candidate;
    const bool reduced = candidate != ops::precision_name(ops::Precision::kFp32);
    trial.accuracy_budget = reduced && options.accuracy_budget.empty() ? kAutoAccuracyBudget : reduced ? options.accuracy_budget : "";
    if (candidate.find(ops::precision_name(ops::Precision::kInt8)) == std::string::npos && !trial.calibration_inputs.empty()) {
      if (trial.validation_inputs.empty()) trial.validation_inputs = trial.calibration_inputs;  // measured on them all the same
      trial.calibration_inputs.clear();
    }
    Result<LoadedModel> loaded = load_model(path, bytes, trial, memory);
    if (!loaded.is_ok()) {
      if (loaded.status().code() != StatusCode::kNumericalIssue) return loaded.status();
      trials.push_back(candidate + ": " + loaded.status().message());
      continue;
    }
    std::map<std::string, Tensor> inputs = !options.validation_inputs.empty()    ? options.validation_inputs.front().tensors
                                           : !options.calibration_inputs.empty() ? options.calibration_inputs.front().tensors
                                                                                 : std::map<std::string, Tensor>{};
    if (inputs.empty()) {
      KILN_ASSIGN_OR_RETURN(inputs, loaded.value().engine->generated_inputs());
    }
    KILN_ASSIGN_OR_RETURN(const double ms, best_run_ms(*loaded.value().engine, inputs));
    std::ostringstream line;
    line << candidate << ": " << (reduced ? "within " + trial.accuracy_budget + ", " : std::string()) << ms << " ms a run";
    trials.push_back(line.str());
    if (ms < best_ms) {
      best_ms = ms;
      chosen = candidate;
      best = std::move(loaded).value();
    }
  }
  trials.push_back("chosen: " + chosen + " (the fastest)");
  best->engine->record_precision_trials(std::move(trials));
  return std::move(*best);
}

Result<LoadedModel> load_model(const std::string& path, const std::string* bytes, const SessionOptions& options,
                               std::shared_ptr<MemoryBudget> memory) {
  if (options.precision == "auto") return load_automatic(path, bytes, options, memory);
  Load load(options, std::move(memory));
  KILN_RETURN_IF_ERROR(load.run(path, bytes));
  LoadedModel loaded;
  loaded.engine = std::move(load.started);
  loaded.metadata = std::move(load.metadata);
  loaded.assets = std::move(load.source.assets);
  return loaded;
}

}  // namespace kiln::runtime
