// `kiln run MODEL --input name=file.npy|file.pb|random[:seed] ...`: runs a model, prints its
// outputs and latency, writes each output as DIR/<name>.npy and the JSON report. The session is
// warmed up (Session::warm_up) before the timed runs, so no timed request pays for first-run costs.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <cstdio>
#include <iostream>

#include <nlohmann/json.hpp>

#include "kiln/artifact/loader.h"
#include "kiln/cli/cli_common.h"
#include "kiln/cli/commands.h"
#include "kiln/cli/model_io.h"
#include "kiln/parity.h"
#include "kiln/tensor_io.h"

namespace kiln::cli {

namespace {

struct RunArgs {
  std::string model;
  std::vector<std::string> inputs;
  std::string output_dir;
  std::string report_path;
  int iterations = 1;
  int warmup = 1;
  std::vector<std::string> warmup_inputs;  // NAME=file.npy
  std::string dump_values_dir;
  std::vector<std::string> expected;  // NAME=reference.npy
  double tolerance = 1e-4;
  double timeout_ms = 0;
  SessionFlags flags;
};

void print_output(const std::string& name, const Tensor& t) {
  std::cout << name << ": " << dtype_name(t.dtype()) << shape_to_string(t.shape());
  const int64_t n = t.element_count();
  if (t.dtype() == DType::kString || n == 0) {
    std::cout << "\n";
    return;
  }
  double lo = INFINITY, hi = -INFINITY, sum = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double v = element_as_double(t, i);
    lo = std::min(lo, v);
    hi = std::max(hi, v);
    sum += v;
  }
  std::cout << " min " << lo << " max " << hi << " mean " << sum / static_cast<double>(n) << "\n  [";
  for (int64_t i = 0; i < std::min<int64_t>(n, 8); ++i) std::cout << (i ? ", " : "") << element_as_double(t, i);
  std::cout << (n > 8 ? ", ...]\n" : "]\n");
}

// Compares outputs with references, prints and records each check; NumericalIssue when one fails.
Status check_expected(Session& session, const std::map<std::string, Tensor>& outputs, const RunArgs& args) {
  std::string failures;
  for (const std::string& spec : args.expected) {
    const size_t eq = spec.find('=');
    if (eq == std::string::npos || eq == 0)
      return invalid_argument("--expect '" + spec + "' must look like NAME=reference.npy");
    const std::string name = spec.substr(0, eq);
    auto got = outputs.find(name);
    if (got == outputs.end()) return invalid_argument("--expect names '" + name + "', which is not a model output");
    KILN_ASSIGN_OR_RETURN(Tensor reference, read_tensor_file(spec.substr(eq + 1)));
    const ParityResult parity = compare_tensors(name, got->second, reference);
    session.record_parity(parity);
    if (parity.comparable)
      std::cout << "parity     " << name << ": max abs error " << parity.max_abs_error << ", reference scale "
                << parity.reference_scale << ", relative " << parity.relative_error() << "\n";
    else
      std::cout << "parity     " << name << ": not comparable (" << parity.mismatch << ")\n";
    if (!parity.within(args.tolerance)) failures += (failures.empty() ? "" : ", ") + name;
  }
  if (!failures.empty())
    return Status(StatusCode::kNumericalIssue, "outputs differ from their references beyond relative tolerance " +
                                                   std::to_string(args.tolerance) + ": " + failures);
  return Status::ok();
}

// File name for the `index`-th value dumped: the index keeps node order, the value name (its
// unsafe characters replaced) says what it is.
std::string dump_file_name(size_t index, const std::string& value) {
  std::string safe = value;
  for (char& c : safe)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-') c = '_';
  char prefix[16];
  std::snprintf(prefix, sizeof prefix, "%05zu_", index);
  return prefix + safe.substr(0, 120) + ".npy";
}

// Runs once writing every value each node produces as DIR/<index>_<value>.npy, and DIR/values.json
// listing {file, node, value, dtype, shape} in node order.
Result<std::map<std::string, Tensor>> run_dumping_values(Session& session, const std::map<std::string, Tensor>& inputs,
                                                         const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return invalid_argument("cannot create --dump-values folder '" + dir + "': " + ec.message());
  nlohmann::json index = nlohmann::json::array();
  Status written = Status::ok();
  auto outputs = session.run_observed(inputs, [&](const std::string& node, const std::string& value, const Tensor& tensor) {
    if (!written.is_ok() || tensor.dtype() == DType::kString) return;
    const std::string file = dump_file_name(index.size(), value);
    written = write_npy_file(dir + "/" + file, tensor);
    index.push_back({{"file", file}, {"node", node}, {"value", value}, {"dtype", dtype_name(tensor.dtype())}, {"shape", tensor.shape()}});
  });
  KILN_RETURN_IF_ERROR(written);
  if (outputs.is_ok()) KILN_RETURN_IF_ERROR(write_text_file(dir + "/values.json", index.dump(1)));
  return outputs;
}

Status run_model(const RunArgs& args) {
  KILN_ASSIGN_OR_RETURN(SessionOptions options, to_options(args.flags));
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<Session> session, Session::load(args.model, options));
  KILN_ASSIGN_OR_RETURN(auto inputs, make_inputs(*session, options, args.inputs));
  // Warm up before any timed request: on --warmup-input, else an artifact's recorded fixtures
  // (outputs checked), else the run's own inputs (random data may not suit an index or axes input).
  KILN_ASSIGN_OR_RETURN(auto warmup_inputs, read_named_tensors("--warmup-input", args.warmup_inputs));
  if (warmup_inputs.empty() && !artifact::is_artifact_file(args.model)) warmup_inputs = inputs;
  RunOptions run_options;
  run_options.timeout_ms = args.timeout_ms;
  KILN_RETURN_IF_ERROR(session->warm_up(warmup_inputs, args.warmup, run_options));
  std::map<std::string, Tensor> outputs;
  for (int i = 0; i < args.iterations; ++i) {
    if (!args.dump_values_dir.empty() && i == 0) {
      KILN_ASSIGN_OR_RETURN(outputs, run_dumping_values(*session, inputs, args.dump_values_dir));
      continue;
    }
    KILN_ASSIGN_OR_RETURN(outputs, session->run(inputs, run_options));
  }
  for (const auto& [name, tensor] : outputs) print_output(name, tensor);
  std::cout << session->report_summary() << "\n";
  // The run succeeded: its outputs and report are written even when a parity check fails, since
  // they are the evidence of that failure.
  const Status parity = check_expected(*session, outputs, args);
  if (parity.code() == StatusCode::kInvalidArgument) return parity;
  if (!args.output_dir.empty()) KILN_RETURN_IF_ERROR(write_outputs(args.output_dir, outputs));
  if (!args.report_path.empty()) KILN_RETURN_IF_ERROR(write_text_file(args.report_path, session->report_json()));
  return parity;
}

}  // namespace

void add_run_command(CLI::App& app, std::function<void(int)> set_exit) {
  auto args = std::make_shared<RunArgs>();
  CLI::App* cmd = app.add_subcommand("run", "Run a model on given or random inputs; print outputs, latency and evidence");
  cmd->add_option("model", args->model, "ONNX model or .kiln artifact")->required();
  cmd->add_option("--input", args->inputs, "NAME=file.npy | NAME=file.pb | NAME=random[:SEED] (repeatable)");
  cmd->add_option("--output-dir", args->output_dir, "Write each output as DIR/<output name>.npy");
  cmd->add_option("--report", args->report_path, "Write the JSON evidence report here (schema: docs/REPORT.md)");
  cmd->add_option("--timeout", args->timeout_ms,
                  "Milliseconds each run (warm-up ones too) may take: past it, the run stops at its next kernel or "
                  "Loop/Scan iteration, a cancelled run (default 0: none)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--iterations", args->iterations, "Timed runs (the first is reported separately)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--warmup", args->warmup, "Warm-up runs before the timed ones (default 1; on the run's inputs, or a .kiln model's recorded fixtures, outputs checked)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--warmup-input", args->warmup_inputs, "Warm up on this input instead, NAME=file.npy|file.pb (repeatable)");
  cmd->add_option("--dump-values", args->dump_values_dir,
                  "Write every value each node produces in the first timed run as DIR/<n>_<value>.npy, with DIR/values.json "
                  "(with --mode eager: every value of the original graph)");
  cmd->add_option("--expect", args->expected,
                  "NAME=reference.npy: compare an output with a reference and record the parity (repeatable)");
  cmd->add_option("--tolerance", args->tolerance,
                  "Largest accepted max-abs-error relative to max(1, max|reference|) for --expect")
      ->check(CLI::NonNegativeNumber);
  add_session_flags(*cmd, args->flags);
  cmd->callback([args, set_exit] {
    Status s = run_model(*args);
    set_exit(s.is_ok() ? 0 : report_error(s));
  });
}

}  // namespace kiln::cli
