// `kiln replay MODEL --calls calls.json`: runs a sequence of calls with varying input shapes in
// order, as a server sees traffic, and reports what that cost: total time, per-call p50/p99,
// peak RSS, and the session's variants (built, hits, evictions) and guard failures. calls.json is
// a list of {input name: shape}; each call's inputs are seeded pseudo-random tensors
// (kiln::random_tensor, seed = call index). bench/dynamic.sh runs it beside ONNX Runtime.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iostream>

#include <nlohmann/json.hpp>

#include "kiln/cli/cli_common.h"
#include "kiln/cli/commands.h"
#include "kiln/runtime/session_access.h"

namespace kiln::cli {
namespace {

struct ReplayArgs {
  std::string model, calls_path, json_path;
  SessionFlags flags;
};

using Call = std::map<std::string, std::vector<int64_t>>;

Result<std::vector<Call>> read_calls(const std::string& path) {
  std::ifstream in(path);
  if (!in) return not_found("calls file '" + path + "' cannot be read");
  const nlohmann::json calls = nlohmann::json::parse(in, nullptr, false);
  if (!calls.is_array()) return invalid_argument("calls file '" + path + "' is not a JSON list of {input: shape}");
  std::vector<Call> out;
  for (const nlohmann::json& c : calls) {
    if (!c.is_object()) return invalid_argument("calls file '" + path + "': call " + std::to_string(out.size()) + " is not an object");
    Call call;
    for (const auto& [name, shape] : c.items()) {
      if (!shape.is_array()) return invalid_argument("calls file '" + path + "': input '" + name + "' has no shape list");
      for (const nlohmann::json& d : shape) {
        if (!d.is_number_unsigned()) return invalid_argument("calls file '" + path + "': input '" + name + "' has a bad dim");
        call[name].push_back(d.get<int64_t>());
      }
    }
    out.push_back(std::move(call));
  }
  return out;
}

double percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size())))];
}

int64_t peak_rss_bytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<int64_t>(usage.ru_maxrss) * 1024;
}

Status replay(const ReplayArgs& args) {
  KILN_ASSIGN_OR_RETURN(const std::vector<Call> calls, read_calls(args.calls_path));
  if (calls.empty()) return invalid_argument("calls file '" + args.calls_path + "' lists no call");
  KILN_ASSIGN_OR_RETURN(const SessionOptions options, to_options(args.flags));
  const auto load_start = std::chrono::steady_clock::now();
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<Session> session, Session::load(args.model, options));
  const double load_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - load_start).count();
  std::map<std::string, DType> dtypes;
  for (const TensorInfo& info : session->inputs()) dtypes[info.name] = info.dtype;
  std::vector<double> latencies;
  for (size_t i = 0; i < calls.size(); ++i) {
    std::map<std::string, Tensor> inputs;
    for (const auto& [name, shape] : calls[i]) {
      if (!dtypes.count(name)) return invalid_argument("call " + std::to_string(i) + " names '" + name + "', which is not a model input");
      inputs[name] = random_tensor(dtypes[name], shape, i);
    }
    const auto start = std::chrono::steady_clock::now();
    Result<std::map<std::string, Tensor>> out = session->run(inputs);
    if (!out.is_ok()) return out.status().with_context("call " + std::to_string(i));
    latencies.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  const report::Report report = SessionAccess::report(*session);
  const nlohmann::json sections = report::to_json_value(report);
  double total = 0;
  for (double l : latencies) total += l;
  const nlohmann::json result = {{"runner", "kiln"},
                                 {"mode", report.execution.mode},
                                 {"calls", latencies.size()},
                                 {"load_ms", load_ms},
                                 {"total_ms", total},
                                 {"p50_ms", percentile(latencies, 0.5)},
                                 {"p99_ms", percentile(latencies, 0.99)},
                                 {"peak_rss_bytes", peak_rss_bytes()},
                                 {"execution", sections.at("execution")},
                                 {"guards", sections.at("guards")},
                                 {"latencies_ms", latencies}};
  std::cout << "replay     " << latencies.size() << " calls in " << total << " ms (p50 " << result["p50_ms"].get<double>()
            << " ms, p99 " << result["p99_ms"].get<double>() << " ms), peak RSS " << peak_rss_bytes() / (1 << 20) << " MiB, "
            << report.execution.variants_built << " variants built, " << report.execution.evictions << " evicted\n";
  if (!args.json_path.empty()) KILN_RETURN_IF_ERROR(write_text_file(args.json_path, result.dump(1)));
  return Status::ok();
}

}  // namespace

void add_replay_command(CLI::App& app, std::function<void(int)> set_exit) {
  auto args = std::make_shared<ReplayArgs>();
  CLI::App* cmd = app.add_subcommand("replay", "Run a sequence of calls with varying input shapes; report total, p50/p99, peak RSS, variants");
  cmd->add_option("model", args->model, "ONNX model or .kiln artifact")->required();
  cmd->add_option("--calls", args->calls_path, "JSON list of calls, each {input name: shape}")->required();
  cmd->add_option("--json", args->json_path, "Write the figures (and every call's latency) as JSON");
  add_session_flags(*cmd, args->flags);
  cmd->callback([args, set_exit] {
    const Status s = replay(*args);
    set_exit(s.is_ok() ? 0 : report_error(s));
  });
}

}  // namespace kiln::cli
