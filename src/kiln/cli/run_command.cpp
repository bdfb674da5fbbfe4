// `kiln run MODEL --input name=file.npy|file.pb|random[:seed] ...`: runs a model, prints its
// outputs and latency, writes each output as DIR/<name>.npy and the JSON report.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <iostream>

#include "kiln/cli/cli_common.h"
#include "kiln/cli/commands.h"
#include "kiln/tensor_io.h"

namespace kiln::cli {

namespace {

struct RunArgs {
  std::string model;
  std::vector<std::string> inputs;
  std::string output_dir;
  std::string report_path;
  int iterations = 1;
  int warmup = 0;
  SessionFlags flags;
};

const TensorInfo* find_input(const Session& session, const std::string& name) {
  for (const TensorInfo& info : session.inputs())
    if (info.name == name) return &info;
  return nullptr;
}

// Shape for a random input: the model's dims, symbolic ones from --shape or 1.
std::vector<int64_t> random_shape(const TensorInfo& info, const SessionOptions& options) {
  auto given = options.input_shapes.find(info.name);
  if (given != options.input_shapes.end()) return given->second;
  std::vector<int64_t> shape;
  for (int64_t d : info.shape) shape.push_back(d >= 0 ? d : 1);
  return shape;
}

Result<Tensor> make_input(const Session& session, const SessionOptions& options, const std::string& name,
                          const std::string& spec) {
  const TensorInfo* info = find_input(session, name);
  if (!info) return invalid_argument("--input names '" + name + "', which is not a model input");
  if (spec == "random" || spec.rfind("random:", 0) == 0) {
    uint64_t seed = 0;
    if (spec.size() > 7) {
      const std::string digits = spec.substr(7);
      if (digits.empty() || digits.size() > 18 || digits.find_first_not_of("0123456789") != std::string::npos)
        return invalid_argument("--input " + name + "=" + spec + ": seed must be a non-negative integer");
      seed = std::stoull(digits);
    }
    if (!info->rank_known) return invalid_argument("input '" + name + "' has unknown rank; give --shape " + name + "=...");
    Tensor t = random_tensor(info->dtype, random_shape(*info, options), seed);
    if (!t.defined()) return invalid_argument("cannot make a random tensor for input '" + name + "'");
    return t;
  }
  return read_tensor_file(spec);
}

Result<std::map<std::string, Tensor>> make_inputs(const Session& session, const SessionOptions& options,
                                                  const std::vector<std::string>& specs) {
  std::map<std::string, Tensor> inputs;
  for (const std::string& s : specs) {
    const size_t eq = s.find('=');
    if (eq == std::string::npos || eq == 0)
      return invalid_argument("--input '" + s + "' must look like NAME=file.npy, NAME=file.pb or NAME=random[:SEED]");
    KILN_ASSIGN_OR_RETURN(Tensor t, make_input(session, options, s.substr(0, eq), s.substr(eq + 1)));
    inputs[s.substr(0, eq)] = std::move(t);
  }
  return inputs;
}

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

// "a/b:0" -> "a_b_0": output names become file names inside the output folder.
std::string file_name_for(const std::string& name) {
  std::string s = name;
  for (char& c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.')) c = '_';
  return s.empty() || s[0] == '.' ? "_" + s : s;
}

Status write_outputs(const std::string& dir, const std::map<std::string, Tensor>& outputs) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return invalid_argument("cannot create output folder '" + dir + "': " + ec.message());
  for (const auto& [name, tensor] : outputs)
    KILN_RETURN_IF_ERROR(write_npy_file((std::filesystem::path(dir) / (file_name_for(name) + ".npy")).string(), tensor));
  return Status::ok();
}

Status run_model(const RunArgs& args) {
  KILN_ASSIGN_OR_RETURN(SessionOptions options, to_options(args.flags));
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<Session> session, Session::load(args.model, options));
  KILN_ASSIGN_OR_RETURN(auto inputs, make_inputs(*session, options, args.inputs));
  std::map<std::string, Tensor> outputs;
  for (int i = 0; i < args.warmup + args.iterations; ++i) {
    KILN_ASSIGN_OR_RETURN(outputs, session->run(inputs));
  }
  for (const auto& [name, tensor] : outputs) print_output(name, tensor);
  std::cout << session->report_summary() << "\n";
  if (!args.output_dir.empty()) KILN_RETURN_IF_ERROR(write_outputs(args.output_dir, outputs));
  if (!args.report_path.empty()) KILN_RETURN_IF_ERROR(write_text_file(args.report_path, session->report_json()));
  return Status::ok();
}

}  // namespace

void add_run_command(CLI::App& app, std::function<void(int)> set_exit) {
  auto args = std::make_shared<RunArgs>();
  CLI::App* cmd = app.add_subcommand("run", "Run a model on given or random inputs; print outputs, latency and evidence");
  cmd->add_option("model", args->model, "ONNX model file")->required();
  cmd->add_option("--input", args->inputs, "NAME=file.npy | NAME=file.pb | NAME=random[:SEED] (repeatable)");
  cmd->add_option("--output-dir", args->output_dir, "Write each output as DIR/<output name>.npy");
  cmd->add_option("--report", args->report_path, "Write the JSON evidence report here (schema: docs/REPORT.md)");
  cmd->add_option("--iterations", args->iterations, "Timed runs (the first is reported separately)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--warmup", args->warmup, "Untimed-in-summary runs before the timed ones")->check(CLI::NonNegativeNumber);
  add_session_flags(*cmd, args->flags);
  cmd->callback([args, set_exit] {
    Status s = run_model(*args);
    set_exit(s.is_ok() ? 0 : report_error(s));
  });
}

}  // namespace kiln::cli
