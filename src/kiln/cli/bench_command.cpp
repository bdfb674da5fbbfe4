// `kiln bench MODEL`: times a model the way users compare runtimes: load, first run, warm-up, then
// N timed runs with min/median/p90/max, and the kernels that took the time. --json writes the
// figures for bench/run.sh; --profile writes a Chrome trace (chrome://tracing, Perfetto) of the
// timed runs, each event naming the ONNX node(s) it came from.
#include <algorithm>
#include <chrono>
#include <iomanip>
#include <iostream>
#include <map>
#include <tuple>

#include <nlohmann/json.hpp>

#include "kiln/cli/cli_common.h"
#include "kiln/cli/commands.h"
#include "kiln/cli/model_io.h"
#include "kiln/ir/elapsed.h"

namespace kiln::cli {

namespace {

struct BenchArgs {
  std::string model;
  std::vector<std::string> inputs;
  int warmup = 5;
  int runs = 20;
  std::string json_path;
  std::string profile_path;
  std::string output_dir;
  SessionFlags flags;
};

struct LatencyStats {
  double min = 0, median = 0, p90 = 0, max = 0, mean = 0;
};

// Nearest-rank percentiles; the median of an even count is the mean of the middle two.
LatencyStats stats_of(std::vector<double> samples) {
  std::sort(samples.begin(), samples.end());
  const size_t n = samples.size();
  LatencyStats s;
  s.min = samples.front();
  s.max = samples.back();
  s.median = n % 2 ? samples[n / 2] : (samples[n / 2 - 1] + samples[n / 2]) / 2;
  s.p90 = samples[std::min(n - 1, static_cast<size_t>((0.9 * static_cast<double>(n)) + 0.999999) - 1)];
  for (double v : samples) s.mean += v / static_cast<double>(n);
  return s;
}

// Time per run spent in each (op type, provider, implementation), averaged over the timed runs.
struct KernelTotal {
  std::string op_type, provider, implementation;
  bool scalar_loop = false;
  int64_t calls = 0;
  double ms = 0;
};

// A scalar loop (KernelEvent::scalar_loop) above this share of the kernels' time gets a warning.
constexpr double kScalarLoopWarningShare = 0.05;

struct BenchResult {
  double load_ms = 0, first_run_ms = 0;
  std::vector<double> samples_ms;
  std::vector<KernelTotal> kernels;  // slowest first
  nlohmann::json trace_events = nlohmann::json::array();
  nlohmann::json precision;  // the report's precision section, without its per-product list
};

// Adds one run's kernels to the totals and, when `trace` is given (--profile), to the trace.
using KernelKey = std::tuple<std::string, std::string, std::string>;

void add_run_to_profile(const std::vector<KernelEvent>& events, double run_offset_ms, std::map<KernelKey, KernelTotal>& totals,
                        nlohmann::json* trace) {
  for (const KernelEvent& e : events) {
    KernelTotal& t = totals[{e.op_type, e.provider, e.implementation}];
    t.op_type = e.op_type;
    t.provider = e.provider;
    t.implementation = e.implementation;
    t.scalar_loop = e.scalar_loop();
    t.calls += e.calls;
    t.ms += e.self_ms;  // a control-flow node's own time; its bodies' kernels are events of their own
    if (!trace) continue;
    trace->push_back({{"name", e.node.empty() ? e.op_type : e.node},
                     {"cat", e.provider},
                     {"ph", "X"},
                     {"ts", (run_offset_ms + e.start_ms) * 1000.0},
                     {"dur", e.duration_ms * 1000.0},
                     {"pid", 1},
                     {"tid", 1 + e.depth},  // a body's kernels on a row of their own: summed over calls, they overlap
                     {"args",
                      {{"op_type", e.op_type},
                       {"implementation", e.implementation},
                       {"onnx_nodes", e.source_nodes},
                       {"calls", e.calls},
                       {"parent", e.parent}}}});
  }
}

Result<BenchResult> bench(Session& session, const std::map<std::string, Tensor>& inputs, const BenchArgs& args,
                          std::map<std::string, Tensor>& outputs) {
  BenchResult r;
  auto start = std::chrono::steady_clock::now();
  KILN_ASSIGN_OR_RETURN(outputs, session.run(inputs));
  r.first_run_ms = ms_since(start);
  for (int i = 0; i < args.warmup; ++i) KILN_RETURN_IF_ERROR(session.run(inputs).status());
  std::map<KernelKey, KernelTotal> totals;
  const auto timed_start = std::chrono::steady_clock::now();
  for (int i = 0; i < args.runs; ++i) {
    const double offset = ms_since(timed_start);
    start = std::chrono::steady_clock::now();
    KILN_ASSIGN_OR_RETURN(outputs, session.run(inputs));
    r.samples_ms.push_back(ms_since(start));
    // The trace (hundreds of thousands of JSON objects over a long bench) is built only when asked
    // for: its allocations would otherwise fragment the heap the timed runs allocate from.
    add_run_to_profile(session.last_run_kernels(), offset, totals, args.profile_path.empty() ? nullptr : &r.trace_events);
  }
  for (auto& [key, total] : totals) {
    total.ms /= args.runs;
    total.calls /= args.runs;
    r.kernels.push_back(total);
  }
  std::sort(r.kernels.begin(), r.kernels.end(), [](const KernelTotal& a, const KernelTotal& b) { return a.ms > b.ms; });
  return r;
}

void print_result(const BenchResult& r, const LatencyStats& s, int threads) {
  std::cout << std::fixed << std::setprecision(3) << "load        " << r.load_ms << " ms\n"
            << "first run   " << r.first_run_ms << " ms\n"
            << "latency     min " << s.min << "  median " << s.median << "  p90 " << s.p90 << "  max " << s.max
            << " ms  (" << r.samples_ms.size() << " runs, " << (threads ? std::to_string(threads) : "all") << " threads)\n";
  if (r.precision.value("requested", "fp32") != "fp32") {
    std::cout << "precision   " << r.precision["requested"].get<std::string>() << ", " << r.precision["reduced_products"] << " products\n";
    if (r.precision.contains("accuracy"))
      for (const auto& a : r.precision["accuracy"]["outputs"])
        std::cout << std::setprecision(6) << "  vs fp32   '" << a["output"].get<std::string>() << "' max abs " << a["max_abs_error"].get<double>()
                  << ", rel " << a["max_relative_error"].get<double>() << ", cosine " << a["cosine"].get<double>()
                  << (a.contains("top1_agreement") ? ", top-1 " + std::to_string(a["top1_agreement"].get<double>()) : std::string()) << "\n"
                  << std::setprecision(3);
  }
  std::cout << "kernels     per run, slowest first:\n";
  double total = 0;
  for (const KernelTotal& k : r.kernels) total += k.ms;
  for (size_t i = 0; i < std::min<size_t>(r.kernels.size(), 12); ++i) {
    const KernelTotal& k = r.kernels[i];
    std::cout << "  " << std::left << std::setw(24) << k.op_type << std::setw(10) << k.provider << std::right << std::setw(6)
              << k.calls << " x " << std::setw(10) << k.ms << " ms  " << std::setprecision(1) << std::setw(5)
              << (total > 0 ? 100.0 * k.ms / total : 0.0) << "%  " << k.implementation << "\n"
              << std::setprecision(3);
  }
  for (const KernelTotal& k : r.kernels)
    if (k.scalar_loop && total > 0 && k.ms / total > kScalarLoopWarningShare)
      std::cerr << std::fixed << "warning: " << k.op_type << " runs " << k.implementation << " (a scalar loop) for "
                << std::setprecision(1) << 100.0 * k.ms / total << "% of the kernels' time (" << std::setprecision(3) << k.ms
                << " ms per run)\n";
}

nlohmann::json result_json(const BenchResult& r, const LatencyStats& s, const BenchArgs& args) {
  nlohmann::json kernels = nlohmann::json::array();
  for (const KernelTotal& k : r.kernels)
    kernels.push_back({{"op_type", k.op_type}, {"provider", k.provider}, {"implementation", k.implementation},
                       {"scalar_loop", k.scalar_loop}, {"calls", k.calls}, {"ms", k.ms}});
  return {{"runner", "kiln"},
          {"version", KILN_VERSION},
          {"model", args.model},
          {"threads", args.flags.threads},
          {"providers", args.flags.providers},
          {"load_ms", r.load_ms},
          {"first_run_ms", r.first_run_ms},
          {"warmup", args.warmup},
          {"runs", args.runs},
          {"samples_ms", r.samples_ms},
          {"latency_ms", {{"min", s.min}, {"median", s.median}, {"p90", s.p90}, {"max", s.max}, {"mean", s.mean}}},
          {"precision", r.precision},
          {"kernels", kernels}};
}

Status bench_model(const BenchArgs& args) {
  KILN_ASSIGN_OR_RETURN(SessionOptions options, to_options(args.flags));
  KILN_RETURN_IF_ERROR(validate_on_inputs(options, args.inputs));
  const auto load_start = std::chrono::steady_clock::now();
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<Session> session, Session::load(args.model, options));
  const double load_ms = ms_since(load_start);
  KILN_ASSIGN_OR_RETURN(auto inputs, make_inputs(*session, options, args.inputs));
  KILN_RETURN_IF_ERROR(add_missing_random_inputs(*session, options, inputs));
  std::map<std::string, Tensor> outputs;
  KILN_ASSIGN_OR_RETURN(BenchResult result, bench(*session, inputs, args, outputs));
  result.load_ms = load_ms;
  result.precision = nlohmann::json::parse(session->report_json())["precision"];
  result.precision.erase("products");
  const LatencyStats stats = stats_of(result.samples_ms);
  print_result(result, stats, args.flags.threads);
  if (!args.json_path.empty()) KILN_RETURN_IF_ERROR(write_text_file(args.json_path, result_json(result, stats, args).dump(2)));
  if (!args.profile_path.empty())
    KILN_RETURN_IF_ERROR(write_text_file(args.profile_path,
                                         nlohmann::json{{"traceEvents", result.trace_events}, {"displayTimeUnit", "ms"}}.dump()));
  if (!args.output_dir.empty()) KILN_RETURN_IF_ERROR(write_outputs(args.output_dir, {outputs.begin(), outputs.end()}));
  return Status::ok();
}

}  // namespace

void add_bench_command(CLI::App& app, std::function<void(int)> set_exit) {
  auto args = std::make_shared<BenchArgs>();
  CLI::App* cmd = app.add_subcommand("bench", "Time a model: load, first run, warm-up, N runs (min/median/p90/max), kernel profile");
  cmd->add_option("model", args->model, "Model file (ONNX, GGUF)")->required();
  cmd->add_option("--input", args->inputs,
                  "NAME=file.npy | NAME=file.pb | NAME=random[:SEED] (repeatable; inputs not given are random)");
  cmd->add_option("--warmup", args->warmup, "Untimed runs after the first")->check(CLI::NonNegativeNumber);
  cmd->add_option("--runs", args->runs, "Timed runs")->check(CLI::PositiveNumber);
  cmd->add_option("--json", args->json_path, "Write the timings as JSON (for bench/run.sh)");
  cmd->add_option("--profile", args->profile_path, "Write a Chrome trace of the timed runs");
  cmd->add_option("--output-dir", args->output_dir, "Write each output of the last run as DIR/<output name>.npy");
  add_session_flags(*cmd, args->flags);
  cmd->callback([args, set_exit] {
    Status s = bench_model(*args);
    set_exit(s.is_ok() ? 0 : report_error(s));
  });
}

}  // namespace kiln::cli
