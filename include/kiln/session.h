// kiln::Session: the public C++ API. Load an ONNX model (import, analyse, optimise, partition,
// plan), run it on named tensors, and read the evidence report of every stage.
//
// Thread-safety: every method may be called from several threads at once. Runs (run(),
// run_values(), run_observed(), warm_up()) proceed concurrently, up to
// SessionOptions::max_concurrent_runs, each with its own working memory and kernels for its
// shapes; weights and compiled plans are shared read-only. last_run_kernels() describes the last
// run to finish.
// Ownership: run() returns owning output tensors; input tensors are only read during the call.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "kiln/parity.h"
#include "kiln/status.h"
#include "kiln/stream.h"
#include "kiln/tensor.h"
#include "kiln/value.h"

namespace kiln {

// How a session compiles and runs (docs/ARCHITECTURE.md, Execution modes):
//  kGraph  the optimised whole graph, planned once per input-shape signature (the default);
//  kEager  every node its own kernel, no rewrites: the debugging mode (Session::run_observed);
//  kJit    a copy of the graph specialised to each new input-shape signature, compiled on first
//          sight (passes on static shapes), cached, reused;
//  kAot    a .kiln artifact, compiled ahead (what loading a .kiln file means).
enum class ExecutionMode { kGraph, kEager, kJit, kAot };

// "graph", "eager", "jit", "aot".
const char* execution_mode_name(ExecutionMode mode);
// The mode named `name`; InvalidArgument naming the modes otherwise.
Result<ExecutionMode> parse_execution_mode(const std::string& name);

// The values a symbolic input dim may take: min <= opt <= max. The load-time plan uses opt.
struct DimRange {
  int64_t min = 1, opt = 1, max = 1;
};

// What a run with an input dim outside its profile does: kReject fails it with a
// ShapeGuardFailure naming the input, dim, symbol and range; kSpecialize runs it on a variant
// compiled for its shapes; kPad zero-pads every profiled dim of every run to its bucket (the
// smallest of min, opt, max that holds it; above max is rejected) and cuts the outputs back
// along dims of the same symbol, so at most three sizes per symbol are compiled. kPad is sound
// only for dims the model does not mix across (batch) or masks (a sequence with its attention
// mask, which pads with zeros). All are counted in the report's guards section.
enum class OutOfProfile { kReject, kSpecialize, kPad };

// One set of inputs a session is measured on (SessionOptions::validation_inputs), and where it
// came from (a folder or file, for errors).
struct InputSet {
  std::string source;
  std::map<std::string, Tensor> tensors;
};

struct SessionOptions {
  ExecutionMode mode = ExecutionMode::kGraph;
  // Compiled variants (one per input-shape signature) a session keeps; beyond it the least
  // recently used is evicted (and rebuilt if its shapes come back). At least 1.
  int max_variants = 8;
  // Ranges of symbolic input dims, by symbol ("batch" -> 1:8:32), and the policy for inputs
  // outside them. InvalidArgument at load for min > opt > max or a symbol no input has.
  std::map<std::string, DimRange> shape_profile;
  OutOfProfile out_of_profile = OutOfProfile::kReject;
  // Worker threads for kernels (OpenMP); 0 keeps the runtime's default (all cores), or a .kiln
  // artifact's (the threads it was compiled with, when given then).
  int threads = 0;
  // Providers to place nodes on, in order of preference: "cpu" (fast: oneDNN and its own kernels;
  // it fails closed on an op it lacks, with an UnsupportedOperator naming the node, unless
  // allow_fallback names "cpu_ref") or "cpu_ref" (every op, plain and exact).
  std::vector<std::string> providers = {"cpu"};
  // Providers a node may fall back to when no preferred provider takes it. Empty: fail closed.
  std::vector<std::string> allow_fallback;
  // Run the optimisation pass pipeline.
  bool optimize = true;
  // Names of passes to skip (see `kiln passes`).
  std::vector<std::string> disabled_passes;
  // Concrete shapes for inputs with symbolic dims, used to plan memory at load time. Inputs not
  // named here get symbolic dims set to 1 for the load-time plan; run() re-plans for new shapes.
  std::map<std::string, std::vector<int64_t>> input_shapes;
  // Compile for exactly the load-time shapes (input_shapes, symbolic dims not named there set to
  // 1): the inputs' symbolic dims become constants before analysis, so every pass sees a static
  // graph (shape arithmetic folds away, shape-dependent fusions apply). A run with another shape is
  // a ShapeGuardFailure naming the input and dim.
  bool specialize = false;
  // For .kiln artifacts (load() reads them as well as .onnx files): the raw 32-byte Ed25519 public
  // key the artifact must be signed with (empty: any signature, or none), and whether an unsigned
  // artifact is refused. A failed check is an IntegrityFailure; nothing runs.
  std::string artifact_public_key;
  bool require_signature = false;
  // Instruction-set level to build kernels for, below this machine's best: "avx2",
  // "avx512_core", "avx512_core_vnni", "avx512_core_bf16"; "" for the best. It simulates a lesser
  // machine: an artifact needing features above it is an UnsupportedTarget. oneDNN takes the cap
  // once per process, before its first kernel (InvalidArgument after that).
  std::string isa;
  // graph mode: generate kernels for element-wise chains, Softmax and LayerNormalization from
  // loop IR with the host compiler when the session is built (jit always does); a .kiln artifact
  // written from such a session embeds their object, so loading it needs no compiler.
  // UnsupportedTarget when no compiler runs.
  bool generate_kernels = false;
  // Choose among a kernel's candidates (a marked convolution direct or by Winograd) by timing them
  // on this machine when a plan is built, within tune_budget_ms per session; winners are cached
  // in $KILN_CACHE_DIR/tactics, so a second compile measures nothing. Off: each provider's
  // heuristic picks. Either way each choice is in the report's `tuning` section.
  bool tune = false;
  double tune_budget_ms = 5000;
  // Runs in flight at once. Each has its own working memory (arena) and its own kernels for its
  // input shapes, built the first time it needs them; weights are shared. A caller beyond the
  // limit waits for a run to end. At least 1.
  int max_concurrent_runs = 4;
  // The most iterations one Loop may run in a run: a Loop whose trip count is above it (with no
  // condition input) is refused before it starts, and one that reaches it is stopped, each with an
  // InvalidArgument naming the node. 0: unbounded. (A run's time is bounded by RunOptions::timeout_ms.)
  int64_t max_loop_iterations = 100'000'000;
  // The most bytes the session's buffers may hold at once: the weights (or an artifact's bytes),
  // packed copies, each run's arena and outputs, and values made while running. A load, or a run
  // whose shapes would pass it, is refused before it allocates with an AllocationFailure naming
  // the planned bytes, the limit and the largest buffers; an allocation refused mid-run ends that
  // run only (AllocationFailure) and the session serves the next one. Outputs the caller keeps
  // count until freed. Not counted: bookkeeping, the protobuf of a model being imported, and
  // the scratch oneDNN takes itself outside convolutions. The report's memory section shows
  // planned and peak use against it.
  // 0: no limit.
  int64_t memory_limit = 0;
  // The arithmetic of convolutions and matrix products with constant weights: "fp32" (default),
  // "bf16" (bfloat16 products accumulated in float32: needs AVX512_BF16), "int8" (int8 weights per
  // output channel, inputs quantized per run), a preference such as "int8+bf16" (each
  // product the first its provider has), or "auto": fp32 and each reduced precision this target
  // has, timed on the validation inputs, the fastest that keeps the accuracy budget
  // (accuracy_budget, else "cos=0.995") kept.
  // Everything else computes in float32. A precision the target lacks is an UnsupportedTarget
  // naming the missing feature. A .kiln artifact keeps the precision it was compiled with.
  std::string precision = "fp32";
  // Products left in float32 under a reduced precision: node names (an ONNX node's name reaches
  // the fused node that contains it) or op types ("Conv", "MatMul", "Gemm").
  std::vector<std::string> keep_fp32;
  // Under a reduced precision the load also loads the model in float32 and runs both on these
  // inputs (none given: the model's example inputs, else seeded random ones of the load-time
  // shapes), and the report's precision section records each output's max absolute and relative
  // error, cosine similarity and, for class scores ([N, C]), top-1/top-5 agreement.
  // A set with a wrong input name, dtype or shape, or a float input all NaN, is an InvalidArgument
  // naming its source and the input.
  std::vector<InputSet> validation_inputs;
  // Limits on those measures, "rel=1e-2,abs=0.5,cos=0.999,top1=0.99,top5=1" (empty: none): a load
  // whose measurement breaks one fails with a NumericalIssue naming the output and the measure.
  std::string accuracy_budget;
  // What a breached budget does: "fail" (the NumericalIssue above) or "fallback": each reduced
  // product is measured alone (every other product in float32), and the most sensitive are kept in
  // float32, as few as keep the budget; the report's precision section lists each measurement and
  // the products kept. A budget that every product in float32 still breaks is a NumericalIssue
  // saying it is impossible.
  std::string on_budget = "fail";
  // Static int8: input sets (checked as validation_inputs are) that the float32 model runs on at
  // load, each int8 product's input range observed; calibration_method turns the ranges into fixed
  // uint8 scales and zero points ("minmax", "percentile": each tail beyond 99.99% clipped, or
  // "entropy": the KL-divergence threshold). Empty: each product quantizes its input per run over
  // that run's range (dynamic). The sets are also the accuracy check's when no validation_inputs
  // are given; the report's precision section records the method, the sets' count and SHA-256.
  std::vector<InputSet> calibration_inputs;
  std::string calibration_method = "minmax";
};

// How one run goes. A RunOptions may be shared by several runs (it is not copied).
struct RunOptions {
  std::string tag;  // names the run in its errors
  // Kernel threads for this run (OpenMP, on the calling thread); 0: the session's. oneDNN's
  // primitives split their work by the threads of the run that built their plan (the first run of
  // each lane and shape), so a later run with other threads changes Kiln's own kernels only.
  int threads = 0;
  // Set from any thread to end the runs using these options at their next kernel boundary (or
  // Loop/Scan iteration), with a Cancelled status; nothing they allocated is kept. Clear it to run
  // with them again.
  std::atomic<bool> terminate{false};
  // A deadline: a run still going this many milliseconds after it began ends at its next kernel
  // boundary or Loop/Scan iteration with a Cancelled status naming the timeout and where it
  // stopped; the session serves the next run as usual. 0: none.
  double timeout_ms = 0;
};

// Name, element type and shape of a model input or output; symbolic dims are -1 with their name
// in dim_names ("" for concrete or anonymous dims). Sequences and optionals have kind kSequence /
// kOptional, dtype the element's dtype (when the element is a tensor) and no shape.
struct TensorInfo {
  Value::Kind kind = Value::Kind::kTensor;
  std::string name;
  DType dtype = DType::kUndefined;
  std::vector<int64_t> shape;
  std::vector<std::string> dim_names;
  bool rank_known = true;
};

// One kernel executed by the last run (profiles: `kiln bench --profile`).
struct KernelEvent {
  std::string op_type;
  std::string node;                       // the executed node's name
  std::vector<std::string> source_nodes;  // the ONNX nodes it stands for (several after fusion)
  std::string provider;
  // What the provider runs for it, as the report's target.node_implementations names it ("brg:avx512_core",
  // "generated:cpp"); "kiln:reference-loop" and "kiln:element-function" are scalar loops (scalar_loop()).
  std::string implementation;
  double start_ms = 0;  // from the start of the run (a body's kernel: its first call)
  double duration_ms = 0;  // over all its calls, the bodies it ran included
  // The kernels of a control-flow node's bodies (If, Loop, Scan) are listed too, `depth` levels
  // down (0: the model's graph), under `parent` (the node running the body), one event per kernel
  // and parent, summed over `calls` (a Loop's iterations). `self_ms`, the duration without the
  // kernels of its bodies, adds up over a run's events without counting any time twice.
  double self_ms = 0;
  int64_t calls = 1;
  int depth = 0;
  std::string parent;

  bool scalar_loop() const {
    return implementation.rfind("kiln:reference-loop", 0) == 0 || implementation == "kiln:element-function";
  }
};

// What write_artifact stores besides the compiled model.
struct ArtifactOptions {
  // Asset name (letters, digits, '.', '_', '-') -> path of the file to store (tokenizer, labels).
  std::map<std::string, std::string> asset_paths;
  // Warm-up fixture inputs, by input name; empty: seeded random ones of the load-time shapes. The
  // outputs the session gives for them are recorded beside them, for warm_up() to check.
  std::map<std::string, Tensor> warmup_inputs;
};

// What the model file says about itself (ONNX's ModelProto fields; an artifact keeps its source
// model's).
struct ModelMetadata {
  std::string producer_name, producer_version, domain, doc_string, graph_name;
  int64_t model_version = 0;
  std::map<std::string, std::string> custom;  // metadata_props
};

// A session's readiness: load() gives a loaded session; warm_up() makes it ready.
enum class SessionState { kLoaded, kReady };

// "float[N,3,224,224]" ("?" for unknown dims, "float[?...]" for unknown rank).
std::string type_text(const TensorInfo& info);

class Session {
 public:
  // Loads and compiles `model_path`: an ONNX model, or a .kiln artifact (docs/ARTIFACT.md), whose
  // optimised graph is partitioned and planned without running the passes again. Errors:
  // InvalidModel, UnsupportedOperator, InvalidArgument (bad options), NotFound (missing file),
  // IntegrityFailure (a corrupted or wrongly signed artifact), UnsupportedTarget.
  static Result<std::unique_ptr<Session>> load(const std::string& model_path, const SessionOptions& options = {});
  // Loads a serialized ONNX model held in memory (external data, if any, is read from the current
  // folder); the report names the model "<bytes>". A .kiln artifact loads from its path only
  // (InvalidArgument).
  static Result<std::unique_ptr<Session>> load_bytes(const std::string& model_bytes, const SessionOptions& options = {});
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  const std::vector<TensorInfo>& inputs() const;
  const std::vector<TensorInfo>& outputs() const;
  const ModelMetadata& metadata() const;

  // Runs the model `runs` times before it serves requests, so that no request pays for first-run
  // costs (page faults on weights and arena, oneDNN's lazy initialisation), then reports ready.
  // The fixtures: `inputs` when given; else an artifact's recorded ones, whose outputs must match
  // the recorded outputs (IntegrityFailure naming the output otherwise, and the session stays
  // loaded); else seeded random inputs of the load-time shapes. Warm-up runs are not counted as
  // requests in the report; its time is (report: stages_ms.warmup, warmup).
  Status warm_up(const std::map<std::string, Tensor>& inputs = {}, int runs = 1);
  // warm_up() with each warm-up run under `run_options` (a timeout, cancellation).
  Status warm_up(const std::map<std::string, Tensor>& inputs, int runs, const RunOptions& run_options);
  // warm_up() for models whose inputs or outputs are sequences or optionals (the fixtures as for
  // warm_up(), given ones as values).
  Status warm_up_values(const std::map<std::string, Value>& inputs, int runs, const RunOptions& run_options);
  SessionState state() const;

  // Runs the model (a request; on a session not yet warmed up, the first one pays the first-run
  // costs, and the report says so). Every model input must be given, with the declared dtype and rank and dims
  // that agree with the model's concrete dims (InvalidArgument naming the input otherwise).
  // Returns one tensor per model output, by name; InvalidArgument when an output is a sequence or
  // optional (use run_values).
  Result<std::map<std::string, Tensor>> run(const std::map<std::string, Tensor>& inputs);
  Result<std::map<std::string, Tensor>> run(const std::map<std::string, Tensor>& inputs, const RunOptions& run_options);
  // run() for models whose inputs or outputs are sequences or optionals.
  Result<std::map<std::string, Value>> run_values(const std::map<std::string, Value>& inputs);
  Result<std::map<std::string, Value>> run_values(const std::map<std::string, Value>& inputs, const RunOptions& run_options);

  // A stream (stream.h): this model called over and over with bound buffers and carried state,
  // with working memory and kernels of its own. InvalidArgument when an input or output is a
  // sequence or an optional. The session must outlive the stream.
  Result<std::unique_ptr<Stream>> open_stream();

  // Called after each node of a run with each tensor it produced (`tensor` is valid only during
  // the call). In eager mode every value of the original graph passes by, in node order.
  using ValueObserver = std::function<void(const std::string& node, const std::string& value, const Tensor& tensor)>;
  Result<std::map<std::string, Tensor>> run_observed(const std::map<std::string, Tensor>& inputs, const ValueObserver& observer);

  // The kernels the last successful run executed, in order, with their timings.
  const std::vector<KernelEvent>& last_run_kernels() const;

  // Adds a parity check (see parity.h) to the report's parity section.
  void record_parity(const ParityResult& parity);

  // The evidence report as JSON (schema: docs/REPORT.md). Updated by load() and every run().
  std::string report_json(int indent = 2) const;
  // A few human-readable lines summarising the report (what `kiln compile` prints).
  std::string report_summary() const;

  // Writes the compiled model as a .kiln artifact (docs/ARTIFACT.md) at `path`, atomically: the
  // manifest (lineage, options, toolchain, pass log, partition map, memory plan, target CPU
  // features, section hashes), the optimised graph, its weights, the asset files and the warm-up
  // fixtures (options). The same model, options, assets and fixtures give the same bytes on the
  // same machine; load() reads it back. UnsupportedOperator for graphs it cannot store
  // (control-flow subgraphs, string weights); NotFound naming a missing asset file;
  // InvalidArgument for a bad asset name or when the file cannot be written. It runs the warm-up
  // fixtures once to record their outputs.
  Status write_artifact(const std::string& path, const ArtifactOptions& options = {});

  // The bytes of the asset `name` of a model loaded from a .kiln artifact; NotFound naming the
  // assets there are.
  Result<std::string> asset(const std::string& name) const;

 private:
  friend class Stream;  // runs over the session's model and plans
  friend struct SessionAccess;  // the tool reads the report as a value (src/kiln/runtime/session_access.h)
  struct Impl;
  explicit Session(std::unique_ptr<Impl> impl);
  // load() and load_bytes(): the model at `path`, or `bytes` when given.
  static Result<std::unique_ptr<Session>> load_model(const std::string& path, const std::string* bytes, const SessionOptions& options);
  std::unique_ptr<Impl> impl_;
};

}  // namespace kiln
