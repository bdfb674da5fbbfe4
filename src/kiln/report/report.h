// The evidence report: what every pipeline stage did, as plain data. report_json.cpp turns it into
// the JSON documented in docs/REPORT.md; report_summary.cpp into the CLI's short summary.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kiln/analysis/type_inference.h"
#include "kiln/model_info.h"
#include "kiln/parity.h"
#include "kiln/partition/partitioner.h"
#include "kiln/passes/pass_manager.h"
#include "kiln/session.h"
#include "kiln/target/target.h"

namespace kiln::report {

struct KernelUse {
  std::string op_type;
  std::string provider;
  int64_t count = 0;
};

struct MemorySection {
  std::vector<std::vector<int64_t>> input_shapes;  // what the plan was built for
  int64_t arena_bytes = 0;  // planned peak
  int64_t naive_bytes = 0;  // no reuse
  int64_t buffers = 0;
  int64_t reused_buffers = 0;
  int64_t concats_in_place = 0;  // Concats whose inputs are written into their output: nothing copied
  int64_t dynamic_values = 0;
  int64_t kernel_reorders = 0;  // activation reorders and conversions inside the plan's kernels
                                // (Winograd's layouts, products' reduced-precision inputs), per run
  int64_t output_bytes = 0;
  // The session's memory budget (SessionOptions::memory_limit; 0: none), what the latest plan
  // needs with what the session held besides arenas when it was made, and what its buffers hold
  // now and at most so far.
  int64_t limit_bytes = 0;
  int64_t planned_bytes = 0;
  int64_t in_use_bytes = 0;
  int64_t peak_bytes = 0;
  // The model's constant bytes that are views of its mapped file (ir::Model::mapping): the file's
  // own pages, not held by the session's buffers, so outside the budget's counts above.
  int64_t mapped_bytes = 0;
};

// The instruction set the kernels were built for, and what the plan's layout-dependent kernels
// (prepacked weights) need of a machine: an artifact's target requirement.
struct TargetSection {
  std::string isa;                                 // the --isa cap; "" for this machine's best
  std::string level;                               // the ISA level kernels are built for (target.h)
  std::vector<std::string> cpu_features;           // what kernels may use here (the cap applied)
  int vector_bits = 0;
  int cores = 0;
  std::vector<int64_t> cache_bytes;                // L1d, L2, L3
  // The processor (target::CpuIdentity): vendor, family, model, stepping, brand, microarchitecture.
  std::string cpu_vendor, cpu_brand, cpu_microarchitecture;
  int cpu_family = 0, cpu_model = 0, cpu_stepping = 0;
  // What the session's first provider prefers there: convolution-region layouts, best first, and
  // whether it has Winograd convolutions.
  std::vector<std::string> activation_layouts;
  bool winograd = false;
  std::vector<std::string> required_features;      // what the latest plan's kernels need
  std::map<std::string, int64_t> implementations;  // oneDNN implementation -> kernels
  std::map<std::string, std::string> node_implementations;  // node -> the implementations its kernel runs
};

struct OpTime {
  std::string op_type;
  int64_t calls = 0;
  double ms = 0;
};

// How the session compiles and runs: its mode, and its variants (one compiled plan per input-shape
// signature, at most max_variants kept).
struct ExecutionSection {
  struct Variant {
    std::vector<std::vector<int64_t>> input_shapes;
    double compile_ms = 0;
    int64_t arena_bytes = 0;  // its planned peak of intermediates
  };
  static constexpr size_t kRecentVariants = 32;
  std::string mode;
  int64_t max_variants = 0;
  // Concurrent runs (run_lanes.h): the bound, the lanes made so far (the most runs that were in
  // flight at once), and the plans built for lanes beyond the first.
  int64_t max_concurrent_runs = 0, lanes = 0, lane_plans_built = 0;
  // Streams (stream.h) opened, and the plans built for them (each stream's own, per input shapes).
  int64_t streams = 0, stream_plans_built = 0;
  int64_t variants_built = 0, cache_hits = 0, cache_misses = 0, evictions = 0, live_variants = 0;
  double compile_ms = 0;        // every variant built: passes, partition and plan (jit), plan (graph)
  int64_t packed_weight_bytes = 0;
  int64_t packed_in_place_bytes = 0;  // of those, weights whose plain bytes the packing replaced  // weights in kernel layouts held by the kept variants (shared ones once)
  // With a bounding shape profile: the arena the profile's max shapes need, reserved at load.
  int64_t profile_max_arena_bytes = 0;
  std::vector<Variant> recent;  // the last kRecentVariants built, oldest first
  // Why no plan was made at load: the guessed input shapes (symbolic dims as 1) do not fit the
  // model; the first run plans for its own shapes. Empty when the load planned.
  std::string deferred_load_plan;
  // jit: kernels generated from loop IR (codegen/kernel_generator.h).
  struct Generated {
    std::string compiler, cache_folder;
    bool cache_writable = true;
    int64_t modules = 0, kernels = 0, object_cache_hits = 0, object_cache_misses = 0, corrupted_entries = 0;
    int64_t artifact_objects = 0;  // modules whose object came from the loaded artifact
    double compile_ms = 0;  // in the host compiler
    int64_t source_bytes = 0;
  };
  std::optional<Generated> generated;  // absent unless kernels are generated
};

// The shape profile's guards: how often runs were checked, what the checks cost, and every input
// dim found outside the profile with what the policy did.
struct GuardSection {
  struct Failure {
    std::string input, symbol;
    int64_t dim = 0, value = 0;
    std::string range;   // "1:8:32"
    std::string action;  // "rejected", "specialized" or "padded"
  };
  static constexpr size_t kRecentFailures = 32;
  std::string profile;  // "batch=1:8:32,seq=1:128:512"; empty when none
  std::string policy;   // "reject" or "specialize"
  int64_t checks = 0;
  double check_us = 0;
  int64_t failures = 0;
  std::vector<Failure> recent;  // the last kRecentFailures, oldest first
  int64_t padded_runs = 0;                          // pad policy: runs whose inputs were padded
  int64_t real_elements = 0, padded_elements = 0;   // of those inputs, before and after padding
};

struct RunSection {
  // Latencies kept: a long-lived session keeps between this many and twice this many of the
  // latest, dropping the oldest in blocks, so its report never grows without bound.
  static constexpr size_t kKeptLatencies = 10000;
  int64_t runs = 0;
  double first_run_ms = 0;
  std::vector<double> latencies_ms;  // the latest runs, in order
  int64_t dropped_latencies = 0;     // older runs no longer in latencies_ms
  std::vector<OpTime> op_times;      // summed over runs, slowest first

  void record(double ms) {
    if (runs == 0) first_run_ms = ms;
    runs += 1;
    latencies_ms.push_back(ms);
    if (latencies_ms.size() >= 2 * kKeptLatencies) {
      latencies_ms.erase(latencies_ms.begin(), latencies_ms.begin() + kKeptLatencies);
      dropped_latencies += static_cast<int64_t>(kKeptLatencies);
    }
  }
  // The kept latencies after the first run (all of them once the first was dropped).
  std::vector<double> steady() const {
    const size_t skip = dropped_latencies == 0 && !latencies_ms.empty() ? 1 : 0;
    return {latencies_ms.begin() + static_cast<std::ptrdiff_t>(skip), latencies_ms.end()};
  }
};

// How one output of a reduced-precision session compares with the float32 model's on the
// validation inputs (runtime/precision_accuracy.h).
struct OutputAccuracy {
  std::string output;
  double max_abs_error = 0;
  double max_relative_error = 0;  // max |x - ref| / max(|ref| over the output), per input, worst
  double cosine = 1;               // of the flattened outputs, the worst input's
  // For an output that looks like class scores ([N, C], C >= 2): the share of rows whose best (and
  // best-5) class agrees with the float32 model's; -1 for other outputs.
  double top1 = -1, top5 = -1;
};

// Each product's precision (compiler/precision_assignment.h) and, for a reduced precision, the
// accuracy measured against the float32 model when the session loaded.
struct PrecisionSection {
  std::string requested = "fp32";
  std::vector<std::string> keep_fp32;
  struct Product {
    std::string node, op_type, precision, reason;
    std::vector<std::string> sources;  // the source model's nodes it stands for
    int weight_levels = 0;             // int8: its weights' largest magnitude (127, or 63 without an int8 dot product)
    // int8: the value its input is, and that input's calibrated uint8 scale and zero point (static
    // quantization); scale 0 when it is quantized per run over its own range (dynamic).
    std::string input;
    float input_scale = 0;
    int32_t input_zero_point = 0;
    // The residual summed into its output (empty: none), and where it is a value kept uint8, its
    // scale and zero point (scale 0 otherwise).
    std::string residual;
    float residual_scale = 0;
    int32_t residual_zero_point = 0;
  };
  std::vector<Product> products;
  int64_t reduced = 0;
  // Values kept bfloat16 between bf16 products: converted neither after the one nor before the
  // other (compiler/precision_assignment.h).
  std::vector<std::string> bf16_values;
  // Values kept uint8 between int8 products, in their calibrated quantization: quantized once, by
  // their writer, never dequantized.
  std::vector<std::string> uint8_values;
  // The accuracy check (empty when float32): what the inputs were ("given", "artifact" fixtures,
  // "generated"), how many, their SHA-256 (of the tensors' bytes in name order), and per output.
  std::string validation_inputs;
  int64_t validation_count = 0;
  std::string validation_sha256;
  std::vector<OutputAccuracy> accuracy;
  // precision "auto": each precision tried, in order, and how it went.
  std::vector<std::string> auto_trials;
  // on_budget "fallback" after a breach: each product's measurement alone, each count of the most
  // sensitive kept in float32 that was tried, and the outcome.
  std::vector<std::string> fallback;
  // Static int8 (a calibration set given): the method, how many input sets, their SHA-256 (as the
  // validation inputs'), and how many products' inputs it calibrated.
  struct Calibration {
    std::string method;
    int64_t count = 0;
    std::string sha256;
    int64_t calibrated_products = 0;
  };
  Calibration calibration;
};

// The warm-up that made the session ready (Session::warm_up).
struct WarmupSection {
  std::string state = "loaded";  // "loaded", then "ready"
  std::string fixtures;          // "artifact" (recorded, outputs checked), "given" or "generated"
  int64_t runs = 0;
  bool checked = false;             // outputs compared with the artifact's recorded ones
  double max_relative_error = 0;    // of that comparison
  double ms = 0;
};

struct StageTimes {
  double import_ms = 0;
  double analysis_ms = 0;
  double passes_ms = 0;
  double partition_ms = 0;
  double plan_ms = 0;
  double tuning_ms = 0;  // measuring kernels' candidates, within plan (the session's total)
  double load_ms = 0;  // all of the above
};

// Kernels chosen by measurement (providers/tuning.h): each choice of the latest plan with its
// candidates' times, and counters over the session.
struct TuningSection {
  struct Choice {
    std::string node, problem, chosen, source;
    std::map<std::string, double> candidate_ms;
  };
  bool enabled = false;
  double budget_ms = 0, spent_ms = 0;
  int64_t measured = 0, cache_hits = 0, cache_corrupted = 0, cache_foreign = 0;
  std::vector<Choice> choices;
};

// A language model's generation (kiln::Generator's report): its key/value cache, load time and the
// last generate() call's figures.
struct GenerationSection {
  int64_t context = 0;         // positions the key/value cache holds
  int64_t kv_cache_bytes = 0;  // every block's keys and values for the context
  double load_ms = 0;          // Generator::load: import, compile, plan, tokenizer
  int64_t prompt_tokens = 0;
  int64_t generated_tokens = 0;
  double time_to_first_token_ms = 0;
  double prompt_tokens_per_second = 0;
  double generation_tokens_per_second = 0;
  int64_t peak_resident_bytes = 0;  // the process's peak resident memory after the call
};

struct Report {
  std::vector<ParityResult> parity;
  std::string kiln_version;
  std::map<std::string, std::string> options;
  ModelInfo model;
  StageTimes stages;
  analysis::InferenceEvidence analysis;
  std::vector<passes::PassRun> passes;
  int64_t nodes_after_passes = 0;
  partition::PartitionMap partition;
  PrecisionSection precision;
  std::vector<KernelUse> kernels;
  MemorySection memory;
  TargetSection target;
  TuningSection tuning;
  WarmupSection warmup;
  ExecutionSection execution;
  GuardSection guards;
  RunSection run;
  std::optional<GenerationSection> generation;
};

// The options section: each option a load was given, as text.
std::map<std::string, std::string> options_section(const SessionOptions& options);
// The target section's machine part (what `target` is and may use; `isa`: the --isa cap, "" for none).
TargetSection target_section(const target::Target& target, const std::string& isa);

// The report as JSON (docs/REPORT.md): the value, and its text.
nlohmann::json to_json_value(const Report& report);
std::string to_json(const Report& report, int indent = 2);
// The sections that depend neither on timing nor on where the model file was (the model's file
// name instead of its path, the pass log without times): the compile's evidence that a
// reproducible record such as a .kiln manifest keeps for people and tools to read.
nlohmann::json reproducible_sections(const Report& report);
std::string to_summary(const Report& report);
// "bf16: 53 of 54 products; vs fp32 on 1 given input set: 'logits' max abs 0.12, rel 0.046, cosine
// 0.99998, top-1 1, top-5 1": the precision section in one line.
std::string precision_line(const PrecisionSection& precision);
// The precision section read back from its JSON (an artifact's manifest keeps it).
PrecisionSection precision_from_json(const nlohmann::json& section);

// Median of a list of latencies (0 when empty).
double median(std::vector<double> values);

}  // namespace kiln::report
