// Engine: runs a CompiledModel (compiler/compiled_model.h). It plans the model for the input
// shapes runs bring (a plan per shape signature, kept in a bounded cache; in jit mode each variant
// compiled first by the variant compiler it was handed), runs requests in lanes (an executor each, up
// to max_concurrent_runs at once), applies the shape policy, warms up, and records its plans,
// variants and runs in the report it was handed. Session hands it a compiled model; Stream calls
// through it.
#pragma once

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "kiln/compiler/compile.h"
#include "kiln/ir/memory_budget.h"
#include "kiln/ops/run_limits.h"
#include "kiln/providers/plan_context.h"
#include "kiln/providers/tuning.h"
#include "kiln/report/report.h"
#include "kiln/runtime/execution_plan.h"
#include "kiln/runtime/executor.h"
#include "kiln/runtime/run_lanes.h"
#include "kiln/runtime/shape_policy.h"
#include "kiln/runtime/variant_cache.h"
#include "kiln/runtime/warmup.h"
#include "kiln/session.h"

namespace kiln::runtime {

// What an engine starts from besides the compiled model.
struct EngineStart {
  SessionOptions options;
  ExecutionMode mode = ExecutionMode::kGraph;
  SpecializedShapes pinned;  // input shapes pinned at load (specialize)
  std::shared_ptr<MemoryBudget> memory;
  std::shared_ptr<providers::Tuner> tuner;
  compiler::LaterCompilers compilers;  // jit variants and control-flow bodies (compiler::later_compilers)
  report::Report report;  // what the load recorded so far (options, target, model)
  std::chrono::steady_clock::time_point load_start;  // when the load began (its target chosen)
  // An artifact's warm-up fixtures: inputs, and the outputs the model gave for them when compiled.
  std::map<std::string, Tensor> warmup_inputs, warmup_outputs;
};

// The report's passes, partition and kernels from a compile's (or a jit variant's) evidence.
void record_compile(report::Report& report, const compiler::CompileEvidence& evidence);

class Engine {
 public:
  // An engine over `compiled`, planned at load for its load-time shapes (the artifact's fixtures',
  // the options' input shapes, else symbolic dims as 1 or the profile's defaults) and, for a
  // profile that bounds them, its max shapes' arena reserved. `start.memory` must be current.
  static Result<std::unique_ptr<Engine>> start(compiler::CompiledModel compiled, EngineStart start);

  const compiler::CompiledModel& compiled() const { return compiled_; }
  const ir::Graph& graph() const { return *compiled_.model.graph; }
  ExecutionMode mode() const { return mode_; }
  const SessionOptions& options() const { return options_; }
  const std::vector<TensorInfo>& inputs() const { return inputs_; }
  const std::vector<TensorInfo>& outputs() const { return outputs_; }
  const std::shared_ptr<MemoryBudget>& memory() const { return memory_; }
  SessionState state() const { return state_; }

  // Runs the plan for `inputs` in an idle lane; a request (counted in the report) when `request`
  // is set; a std::bad_alloc inside is an AllocationFailure.
  Result<std::map<std::string, Value>> execute(const std::map<std::string, Value>& inputs, bool request,
                                               const RunOptions& run_options, const StepObserver& observer = {});
  Result<std::map<std::string, Tensor>> execute_tensors(const std::map<std::string, Tensor>& inputs, bool request,
                                                        const RunOptions& run_options, const StepObserver& observer = {});
  // Runs `runs` warm-up runs on `inputs`, or (none given) the artifact's fixtures, checking their
  // recorded outputs, or generated inputs of the load-time shapes; then the engine is ready.
  Status warm_up(const std::map<std::string, Tensor>& inputs, int runs, const RunOptions& run_options);
  Status warm_up_values(const std::map<std::string, Value>& inputs, int runs, const RunOptions& run_options);
  // The accuracy check of a reduced precision (precision_accuracy.h), into the report.
  void record_accuracy(report::PrecisionSection measured);
  // precision "auto": each precision tried and how it went (session_load.cpp).
  void record_precision_trials(std::vector<std::string> trials);

  // The plan of the load-time shapes, and warm-up inputs when none are given (what an artifact
  // keeps): the model's example inputs where its format gave some, else seeded random ones of the
  // load-time shapes.
  Result<std::shared_ptr<const ExecutionPlan>> load_plan();
  Result<std::map<std::string, Tensor>> generated_inputs() const;

  // Begins a run (or a stream's call) with `run_options` on the calling thread: sets OpenMP's
  // thread count there (before a plan may be built on it: oneDNN sizes a primitive's work split by
  // the threads when it is made) and returns the run's limits (ops/run_limits.h), its deadline from
  // now. InvalidArgument for a negative timeout.
  Result<ops::RunLimits> begin_run(const RunOptions& run_options) const;
  // A stream's: checks the inputs of its next call against the shape policy.
  Status check_stream_inputs(const std::map<std::string, Value>& inputs);
  // A stream's own plan for `shapes` (its kernels keep per-run state).
  Result<std::shared_ptr<const ExecutionPlan>> stream_plan(const ShapeSignature& shapes);
  void count_stream();
  // Records a run of `plan` that took `ms` (takes the lock): its kernels' `timings` become the last run's (taken, the
  // caller gets the previous ones' storage back); a request (`request`) is counted in the report.
  void record_run(bool request, double ms, std::vector<StepTiming>& timings, std::shared_ptr<const ExecutionPlan> plan);

  const std::vector<KernelEvent>& last_run_kernels() const;
  void record_parity(const ParityResult& parity);
  // The report, with the memory in use and its peak as of now.
  report::Report current_report() const;
  // The report's reproducible sections (report::reproducible_sections), for an artifact's manifest.
  nlohmann::json reproducible_evidence() const;

 private:
  Engine(compiler::CompiledModel compiled, EngineStart start);
  // The load-time plan (and the profile's max shapes' arena); the load's time since `load_start`.
  Status plan_at_load(std::chrono::steady_clock::time_point load_start);
  // The plan for `shapes`: a cached variant, else one compiled now (and cached).
  Result<std::shared_ptr<const ExecutionPlan>> plan_for(const ShapeSignature& shapes);
  // jit: a copy of the graph specialised to `shapes`, compiled (the handed variant compiler) and planned.
  Result<std::unique_ptr<ExecutionPlan>> compile_variant(const ShapeSignature& shapes);
  // build_plan for the compiled graph; an artifact's plan for shapes whose generated kernels it
  // does not embed, with no compiler to build them, uses the library kernels instead.
  Result<std::unique_ptr<ExecutionPlan>> plan_compiled_graph(const ShapeSignature& shapes);
  // A plan of its own for `shapes` (for a lane or a stream): compiled for them (jit) or the
  // compiled graph planned for them.
  Result<std::unique_ptr<ExecutionPlan>> new_plan(const ShapeSignature& shapes);
  // The plan of lane `lane` (> 0) for `shapes`: its own, built now when it has none.
  Result<std::shared_ptr<const ExecutionPlan>> lane_plan(size_t lane, const ShapeSignature& shapes);
  // What a plan of `graph` starts from: the artifact's packed weights, those packed in place and
  // those of the plans kept now, so that variants share their packed weights instead of each
  // packing its own; with `generate`, a module for the generated kernels. The first plan of a
  // compiled ONNX model may pack weights in place, so that they are held once.
  providers::PlanContext plan_context(const ir::Graph& graph, bool generate = true);
  Result<std::map<std::string, Value>> run_in_lane(const std::map<std::string, Value>& inputs, bool request,
                                                   const RunOptions& run_options, const StepObserver& observer);
  void record_plan(const ExecutionPlan& plan);
  void record_variants();
  // Finished warm-up runs (`fixtures`: given, artifact or generated; `check`: the recorded outputs'
  // comparison); the engine is ready.
  void record_warmup(const char* fixtures, int runs, const std::optional<WarmupCheck>& check, double ms);
  // The providers' evidence of generated kernels, if any generates.
  std::optional<providers::GeneratedCodeEvidence> generated_code() const;

  const compiler::CompiledModel compiled_;
  const compiler::LaterCompilers compilers_;
  const SessionOptions options_;
  const ExecutionMode mode_;
  const std::shared_ptr<MemoryBudget> memory_;
  const std::shared_ptr<providers::Tuner> tuner_;
  const std::map<std::string, Tensor> warmup_inputs_, warmup_outputs_;
  std::vector<TensorInfo> inputs_, outputs_;
  ShapeSignature load_shapes_;
  // Guards everything below: the plans, lanes, the shape policy's evidence, the report and the
  // last run's timings. A run holds it while it finds its lane and plan and while it records
  // itself, not while its kernels run.
  mutable std::mutex mutex_;
  VariantCache variants_;  // lane 0's plans
  RunLanes lanes_;
  ShapePolicy shape_policy_;
  // Weights the first plan packed in place (plan_context.h): packed-only from then on.
  std::shared_ptr<providers::InPlaceLedger> packed_in_place_ = std::make_shared<providers::InPlaceLedger>();
  bool first_plan_attempted_ = false;
  std::atomic<SessionState> state_{SessionState::kLoaded};
  report::Report report_;
  // The last run's step timings; its KernelEvents are built from them only when asked for, so
  // that a run pays for no string copies.
  std::vector<StepTiming> last_timings_;
  std::shared_ptr<const ExecutionPlan> last_plan_;
  mutable std::optional<std::vector<KernelEvent>> last_kernels_;
};

}  // namespace kiln::runtime
