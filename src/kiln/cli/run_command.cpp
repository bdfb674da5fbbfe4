// `kiln run MODEL --input name=file.npy|file.pb|random[:seed] ...`: runs a model (Session::run_values:
// its inputs and outputs may be tensors, sequences or optionals), prints its outputs and latency,
// writes each output under DIR (model_io.h) and the JSON report. The session is warmed up
// (Session::warm_up_values) before the timed runs, so no timed request pays for first-run costs.
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
  std::vector<std::string> warmup_inputs;  // NAME=file.npy|file.pb
  std::string dump_values_dir;
  std::vector<std::string> expected;  // NAME=reference.npy|reference.pb
  double tolerance = 1e-4;
  double timeout_ms = 0;
  SessionFlags flags;
};

// "name: dtype[shape]" then min, max, mean and the first values; `note` follows the type.
void print_tensor(const std::string& name, const Tensor& t, const char* note = "") {
  std::cout << name << ": " << dtype_name(t.dtype()) << shape_to_string(t.shape()) << note;
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

// A tensor as print_tensor does (a bfloat16 one saying how its .npy file holds it); a sequence or
// optional on a line of its own, then its tensors.
void print_output(const std::string& name, const Value& value) {
  switch (value.kind()) {
    case Value::Kind::kTensor:
      return print_tensor(name, value.tensor(), value.tensor().dtype() == DType::kBFloat16 ? " (.npy: its uint16 bits)" : "");
    case Value::Kind::kSequence:
      std::cout << name << ": " << value.describe() << "\n";
      for (size_t i = 0; i < value.elements().size(); ++i)
        print_tensor("  " + name + "[" + std::to_string(i) + "]", value.elements()[i]);
      return;
    case Value::Kind::kOptional:
      std::cout << name << ": " << value.describe() << "\n";
      if (value.has_element() && value.element().is_tensor()) print_tensor("  " + name, value.element().tensor());
      if (value.has_element() && !value.element().is_tensor()) print_output("  " + name, value.element());
      return;
  }
}

const TensorInfo* find_output(const Session& session, const std::string& name) {
  for (const TensorInfo& info : session.outputs())
    if (info.name == name) return &info;
  return nullptr;
}

// Compares outputs with references (read as the model declares the output: kiln::read_value_file),
// each tensor of a sequence or optional on its own; prints and records each check; NumericalIssue
// when one fails.
Status check_expected(Session& session, const std::map<std::string, Value>& outputs, const RunArgs& args) {
  std::string failures;
  for (const std::string& spec : args.expected) {
    const size_t eq = spec.find('=');
    if (eq == std::string::npos || eq == 0)
      return invalid_argument("--expect '" + spec + "' must look like NAME=reference.npy or NAME=reference.pb");
    const std::string name = spec.substr(0, eq);
    auto got = outputs.find(name);
    const TensorInfo* info = find_output(session, name);
    if (got == outputs.end() || !info) return invalid_argument("--expect names '" + name + "', which is not a model output");
    Result<Value> reference = read_value_file(spec.substr(eq + 1), info->kind, info->dtype);
    if (!reference.is_ok()) return reference.status().with_context("--expect " + name);
    for (const ParityResult& parity : compare_values(name, got->second, reference.value())) {
      session.record_parity(parity);
      if (parity.comparable)
        std::cout << "parity     " << parity.name << ": max abs error " << parity.max_abs_error << ", reference scale "
                  << parity.reference_scale << ", relative " << parity.relative_error() << "\n";
      else
        std::cout << "parity     " << parity.name << ": not comparable (" << parity.mismatch << ")\n";
      if (!parity.within(args.tolerance)) failures += (failures.empty() ? "" : ", ") + parity.name;
    }
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

// Runs once writing every tensor each node produces as DIR/<index>_<value>.npy (bfloat16 as its
// uint16 bits), and DIR/values.json listing {file, node, value, dtype, shape} in node order. The
// model's inputs and outputs must be tensors (Session::run_observed).
Result<std::map<std::string, Value>> run_dumping_values(Session& session, const std::map<std::string, Value>& input_values,
                                                        const std::string& dir) {
  std::map<std::string, Tensor> inputs;
  for (const auto& [name, value] : input_values) {
    if (!value.is_tensor())
      return invalid_argument("--dump-values runs models whose inputs are tensors; input '" + name + "' is a " +
                              value.describe());
    inputs[name] = value.tensor();
  }
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return invalid_argument("cannot create --dump-values folder '" + dir + "': " + ec.message());
  nlohmann::json index = nlohmann::json::array();
  Status written = Status::ok();
  auto outputs = session.run_observed(inputs, [&](const std::string& node, const std::string& value, const Tensor& tensor) {
    if (!written.is_ok() || tensor.dtype() == DType::kString) return;
    const std::string file = dump_file_name(index.size(), value);
    written = write_value_file(dir + "/" + file, tensor);
    index.push_back({{"file", file}, {"node", node}, {"value", value}, {"dtype", dtype_name(tensor.dtype())}, {"shape", tensor.shape()}});
  });
  KILN_RETURN_IF_ERROR(written);
  KILN_RETURN_IF_ERROR(outputs.status());
  KILN_RETURN_IF_ERROR(write_text_file(dir + "/values.json", index.dump(1)));
  return std::map<std::string, Value>(outputs->begin(), outputs->end());
}

Status run_model(const RunArgs& args) {
  KILN_ASSIGN_OR_RETURN(SessionOptions options, to_options(args.flags));
  KILN_RETURN_IF_ERROR(validate_on_inputs(options, args.inputs));
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<Session> session, Session::load(args.model, options));
  KILN_ASSIGN_OR_RETURN(auto inputs, make_input_values(*session, options, args.inputs, "--input"));
  // Warm up before any timed request: on --warmup-input, else an artifact's recorded fixtures
  // (outputs checked), else the run's own inputs (random data may not suit an index or axes input).
  KILN_ASSIGN_OR_RETURN(auto warmup_inputs, make_input_values(*session, options, args.warmup_inputs, "--warmup-input"));
  if (warmup_inputs.empty() && !artifact::is_artifact_file(args.model)) warmup_inputs = inputs;
  RunOptions run_options;
  run_options.timeout_ms = args.timeout_ms;
  KILN_RETURN_IF_ERROR(session->warm_up_values(warmup_inputs, args.warmup, run_options));
  std::map<std::string, Value> outputs;
  for (int i = 0; i < args.iterations; ++i) {
    if (!args.dump_values_dir.empty() && i == 0) {
      KILN_ASSIGN_OR_RETURN(outputs, run_dumping_values(*session, inputs, args.dump_values_dir));
      continue;
    }
    KILN_ASSIGN_OR_RETURN(outputs, session->run_values(inputs, run_options));
  }
  for (const auto& [name, value] : outputs) print_output(name, value);
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
  cmd->add_option("--input", args->inputs,
                  "NAME=file.npy | NAME=file.pb | NAME=random[:SEED] (repeatable); a sequence or optional input is a "
                  "SequenceProto or OptionalProto .pb; a bfloat16 one a uint16 .npy or .pb of its bits, or a BFLOAT16 .pb");
  cmd->add_option("--output-dir", args->output_dir,
                  "Write each output as DIR/<output name>.npy (bfloat16 as its uint16 bits), a sequence or optional as "
                  "DIR/<output name>.pb (SequenceProto, OptionalProto)");
  cmd->add_option("--report", args->report_path, "Write the JSON evidence report here (schema: docs/REPORT.md)");
  cmd->add_option("--timeout", args->timeout_ms,
                  "Milliseconds each run (warm-up ones too) may take: past it, the run stops at its next kernel or "
                  "Loop/Scan iteration, a cancelled run (default 0: none)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--iterations", args->iterations, "Timed runs (the first is reported separately)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--warmup", args->warmup, "Warm-up runs before the timed ones (default 1; on the run's inputs, or a .kiln model's recorded fixtures, outputs checked)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--warmup-input", args->warmup_inputs, "Warm up on this input instead, NAME=file.npy|file.pb as --input (repeatable)");
  cmd->add_option("--dump-values", args->dump_values_dir,
                  "Write every value each node produces in the first timed run as DIR/<n>_<value>.npy, with DIR/values.json "
                  "(with --mode eager: every value of the original graph)");
  cmd->add_option("--expect", args->expected,
                  "NAME=reference.npy|reference.pb: compare an output with a reference and record the parity, a sequence's or "
                  "optional's tensors one by one (repeatable)");
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
