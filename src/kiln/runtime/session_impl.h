// Session::Impl: what a kiln::Session holds (its options, target, model, providers, plans, lanes,
// report) and the stages of its pipeline. Private to the runtime: session.cpp runs the pipeline
// and the requests; stream.cpp (kiln::Stream) runs a stream's calls over the same model and plans.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "kiln/codegen/kernel_generator.h"
#include "kiln/ir/graph.h"
#include "kiln/ir/memory_budget.h"
#include "kiln/ops/run_limits.h"
#include "kiln/partition/partitioner.h"
#include "kiln/passes/pass_manager.h"
#include "kiln/providers/kernel_build.h"
#include "kiln/providers/tuning.h"
#include "kiln/report/report.h"
#include "kiln/runtime/execution_plan.h"
#include "kiln/runtime/body_plans.h"
#include "kiln/runtime/executor.h"
#include "kiln/runtime/plan_memory.h"
#include "kiln/runtime/run_lanes.h"
#include "kiln/runtime/shape_specialization.h"
#include "kiln/runtime/variant_cache.h"
#include "kiln/runtime/warmup.h"
#include "kiln/session.h"
#include "kiln/target/target.h"

namespace kiln {

struct Session::Impl {
  SessionOptions options;
  // The machine this session compiles for: made once (detected, or capped by options.isa) and
  // handed to the providers, the code generator and the artifact check; the report records it.
  target::Target target;
  // What the session's buffers hold, against options.memory_limit: current on the threads that
  // load it and run it (allocate_buffer charges it).
  std::shared_ptr<MemoryBudget> memory;
  ir::Model model;
  partition::ProviderList providers;
  partition::PartitionMap partition;
  ExecutionMode mode = ExecutionMode::kGraph;
  runtime::VariantCache variants;  // lane 0's plans
  // Guards everything below and above that runs change (variants, lanes, the report, the last
  // run's timings); a run holds it while it finds its lane and plan and while it records itself,
  // not while its kernels run.
  mutable std::mutex mutex;
  runtime::RunLanes lanes;
  runtime::SpecializedShapes specialized;  // empty unless options.specialize
  bool from_artifact = false;              // loaded from a .kiln file: the graph is already optimised
  std::map<std::string, std::string> assets;  // the artifact's, by name
  std::map<std::string, Tensor> warmup_inputs, warmup_outputs;  // the artifact's recorded fixtures
  std::vector<providers::PackedConstant> prepacked;  // the artifact's weights in kernel layouts
  std::set<std::string> packed_only;                 // the artifact's weights stored only packed
  // Weights the first plan packed in place (kernel_build.h): packed-only from then on.
  std::shared_ptr<providers::InPlaceLedger> packed_in_place = std::make_shared<providers::InPlaceLedger>();
  bool first_plan_attempted = false;
  int artifact_threads = 0;                          // the artifact's default thread count
  // The artifact's generated kernels: source key -> object bytes (views into the artifact's bytes, read into memory).
  std::map<std::string, std::string_view> generated_code;
  std::shared_ptr<const char> artifact_file;
  std::vector<std::vector<int64_t>> load_shapes;
  std::atomic<SessionState> state{SessionState::kLoaded};
  std::vector<TensorInfo> inputs;
  std::vector<TensorInfo> outputs;
  ModelMetadata metadata;  // as imported, before any pass
  report::Report report;
  // The last run's step timings; its KernelEvents are built from them only when asked for, so
  // that a run pays for no string copies.
  std::vector<runtime::StepTiming> last_timings;
  std::shared_ptr<const runtime::ExecutionPlan> last_plan;
  // Chooses among kernels' candidates: measuring when options.tune, else recording heuristics.
  std::shared_ptr<providers::Tuner> tuner;
  std::optional<std::vector<KernelEvent>> last_kernels;

  // The load pipeline, import to the load-time plan, with `memory` current.
  Status load(const std::string& model_path, const std::string* bytes);
  // The report with the memory in use and its peak as of now.
  report::Report current_report() const;
  // Imports the model at `path`, or the ONNX model `bytes` when given.
  Status import_model(const std::string& path, const std::string* bytes);
  Status choose_mode();
  Status set_up_profile();
  // A profile that bounds the shapes (reject, pad): plans its max shapes and reserves their arena.
  Status reserve_profile_max();
  // Checks `inputs` against the shape profile, applying and recording the policy.
  Status guard_profile(const std::map<std::string, Value>& inputs);
  Status specialize();
  Status analyse();
  // Whether this session rewrites graphs (not eager, not with optimize off).
  bool rewrites() const { return options.optimize && mode != ExecutionMode::kEager; }
  // The provider-independent passes over the whole graph.
  Status optimise(ir::Graph& graph);
  // After partition: each of the policy's providers that prefers a shape of graph
  // (GraphPreferences) has the nodes it runs lowered for it (layouts, Winograd marks, element-wise
  // chains: passes of kLoweringStage); the graph is then placed again.
  Result<partition::PartitionMap> lower(ir::Graph& graph, partition::PartitionMap placed);
  passes::PipelineOptions pipeline_options() const;
  Status make_providers();
  Result<partition::PartitionMap> place(ir::Graph& graph);
  // The plan for `shapes`: a cached variant, else one compiled now (and cached).
  Result<std::shared_ptr<const runtime::ExecutionPlan>> plan_for(const runtime::ShapeSignature& shapes);
  // jit: a copy of the graph specialised to `shapes`, optimised, partitioned and planned.
  Result<std::unique_ptr<runtime::ExecutionPlan>> compile_variant(const runtime::ShapeSignature& shapes);
  void record_variants();
  // What a plan of `graph` starts from: the artifact's packed weights, those packed in place and
  // those of the plans kept now, so that variants share their packed weights instead of each
  // packing its own; with `generate`, a module for the generated kernels. The session's first
  // plan from an ONNX model may pack weights in place, so that they are held once.
  providers::KernelBuild kernel_build(const ir::Graph& graph, bool generate = true);
  // How bodies of control flow compile as graphs of their own (BodyPlans): the graph passes,
  // placement and lowering the main graph gets.
  runtime::BodyCompiler body_compiler() const;
  // jit: passes over a variant's graph, with the weights that exist only packed hidden from them.
  Status optimise_variant(ir::Graph& graph);
  // build_plan for the loaded graph; an artifact's plan for shapes whose generated kernels it does
  // not embed, with no compiler to build them, uses the library kernels instead.
  Result<std::unique_ptr<runtime::ExecutionPlan>> plan_loaded_graph(const runtime::ShapeSignature& shapes);
  void record_plan(const runtime::ExecutionPlan& plan);
  void record_options();
  Status choose_target();
  // Whether kernels are generated from loop IR: jit, graph with generate_kernels, and an artifact
  // that embeds generated kernels (the providers that can generate them do).
  bool generates_kernels() const;
  // The providers' evidence of generated kernels, if any generates.
  std::optional<codegen::CodegenStats> generated_stats() const;
  // A plan of its own for `shapes` (for a lane or a stream, whose kernels keep per-run state):
  // compiled for them (jit) or the loaded graph planned for them. Holds `mutex`.
  Result<std::unique_ptr<runtime::ExecutionPlan>> new_plan(const runtime::ShapeSignature& shapes);
  // The plan of lane `lane` (> 0) for `shapes`: its own, built now when it has none. Holds `mutex`.
  Result<std::shared_ptr<const runtime::ExecutionPlan>> lane_plan(size_t lane, const runtime::ShapeSignature& shapes);
  // Begins a run (or a stream's call) with `run_options` on the calling thread: sets OpenMP's thread
  // count there (before a plan may be built on it: oneDNN sizes a primitive's work split by the
  // threads when it is made) and returns the run's limits (ops/run_limits.h), its deadline from
  // now. InvalidArgument for a negative timeout.
  Result<ops::RunLimits> begin_run(const RunOptions& run_options) const;
  // Records a run of `plan` that took `ms`: its kernels' `timings` become the last run's (taken, the
  // caller gets the previous ones' storage back); a request (`request`) is counted in the report.
  // Holds `mutex`.
  void record_run(bool request, double ms, std::vector<runtime::StepTiming>& timings,
                  std::shared_ptr<const runtime::ExecutionPlan> plan);
  // Runs the plan for `inputs` in an idle lane; a request (counted in the report) when `request`
  // is set; a std::bad_alloc inside is an AllocationFailure. Takes `mutex` itself: the caller must
  // not hold it.
  Result<std::map<std::string, Value>> execute(const std::map<std::string, Value>& inputs, bool request,
                                               const RunOptions& run_options, const runtime::StepObserver& observer = {});
  Result<std::map<std::string, Value>> run_in_lane(const std::map<std::string, Value>& inputs, bool request,
                                                   const RunOptions& run_options, const runtime::StepObserver& observer);
  Result<std::map<std::string, Tensor>> execute_tensors(const std::map<std::string, Tensor>& inputs, bool request,
                                                        const RunOptions& run_options, const runtime::StepObserver& observer = {});
  // Records finished warm-up runs (`fixtures`: given, artifact or generated; `check`: the recorded
  // outputs' comparison) and makes the session ready. Holds `mutex`.
  void record_warmup(const char* fixtures, int runs, const std::optional<runtime::WarmupCheck>& check, double ms);
};

}  // namespace kiln
