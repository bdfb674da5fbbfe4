// `kiln compile MODEL`: runs the pipeline up to the memory plan, prints the evidence summary and
// optionally writes the JSON report and the .kiln artifact (-o).
#include <algorithm>
#include <iostream>

#include "kiln/cli/cli_common.h"
#include "kiln/cli/commands.h"
#include "kiln/frontend/onnx/quantized_export.h"
#include "kiln/io/file.h"
#include "kiln/ops/numeric_precision.h"
#include "kiln/runtime/session_access.h"

namespace kiln::cli {

namespace {

struct CompileArgs {
  std::string model;
  std::string report_path;
  std::string artifact_path;
  std::string onnx_path;  // --emit-onnx
  std::vector<std::string> assets;         // name=path
  std::vector<std::string> warmup_inputs;  // name=file.npy
  SessionFlags flags;
};

Result<ArtifactOptions> artifact_options(const CompileArgs& args) {
  ArtifactOptions options;
  KILN_ASSIGN_OR_RETURN(options.asset_paths, parse_name_values("--asset", args.assets));
  KILN_ASSIGN_OR_RETURN(options.warmup_inputs, read_named_tensors("--warmup-input", args.warmup_inputs));
  if ((!args.assets.empty() || !args.warmup_inputs.empty()) && args.artifact_path.empty())
    return invalid_argument("--asset and --warmup-input need -o: they are stored in the .kiln artifact");
  return options;
}

// --emit-onnx: the source model with the products this session computes in int8 written in ONNX's
// quantization operators (frontend/onnx/quantized_export.h): ONNX Runtime's dynamic MatMulInteger
// form, or QDQ pairs (calibrated inputs, convolutions).
Status write_quantized_onnx(const CompileArgs& args, const Session& session) {
  std::vector<frontend::Int8Product> products;
  for (const auto& p : SessionAccess::report(session).precision.products)
    if (p.precision == ops::precision_name(ops::Precision::kInt8))
      products.push_back({p.node, p.sources, p.weight_levels, p.input_scale, p.input_zero_point, p.residual_scale, p.residual_zero_point});
  if (products.empty()) return invalid_argument("--emit-onnx writes the int8 products, and this compile has none (give --precision int8)");
  KILN_ASSIGN_OR_RETURN(const frontend::QuantizedOnnx quantized, frontend::quantized_onnx(args.model, products));
  KILN_RETURN_IF_ERROR(io::write_file_atomic(args.onnx_path, quantized.model));
  const auto in_form = [&](frontend::QuantizedOnnx::Form form) {
    return std::count_if(quantized.quantized.begin(), quantized.quantized.end(), [&](const auto& q) { return q.form == form; });
  };
  std::cout << "onnx       " << args.onnx_path << ": " << quantized.quantized.size() << " int8 products, "
            << in_form(frontend::QuantizedOnnx::Form::kMatMulInteger) << " as DynamicQuantizeLinear + MatMulInteger (dynamic), "
            << in_form(frontend::QuantizedOnnx::Form::kQdq) << " as QuantizeLinear/DequantizeLinear pairs (QDQ)";
  if (!quantized.left_fp32.empty()) {
    std::cout << "; left fp32 there:";
    for (const std::string& left : quantized.left_fp32) std::cout << " [" << left << "]";
  }
  std::cout << "\n";
  return Status::ok();
}

int run_compile(const CompileArgs& args) {
  auto options = to_options(args.flags);
  if (!options.is_ok()) return report_error(options.status());
  auto artifact = artifact_options(args);
  if (!artifact.is_ok()) return report_error(artifact.status());
  auto session = Session::load(args.model, options.value());
  if (!session.is_ok()) return report_error(session.status());
  std::cout << session.value()->report_summary() << "\n";
  if (!args.report_path.empty()) {
    Status written = write_text_file(args.report_path, session.value()->report_json());
    if (!written.is_ok()) return report_error(written);
    std::cout << "report     " << args.report_path << "\n";
  }
  if (!args.artifact_path.empty()) {
    Status written = session.value()->write_artifact(args.artifact_path, artifact.value());
    if (!written.is_ok()) return report_error(written);
    std::cout << "artifact   " << args.artifact_path << "\n";
  }
  if (!args.onnx_path.empty()) {
    Status written = write_quantized_onnx(args, *session.value());
    if (!written.is_ok()) return report_error(written);
  }
  return 0;
}

}  // namespace

void add_compile_command(CLI::App& app, std::function<void(int)> set_exit) {
  auto args = std::make_shared<CompileArgs>();
  CLI::App* cmd = app.add_subcommand("compile", "Import, analyse, optimise, partition and plan a model; report the evidence");
  cmd->add_option("model", args->model, "Model file (ONNX, GGUF)")->required();
  cmd->add_option("--report", args->report_path, "Write the JSON evidence report here (schema: docs/REPORT.md)");
  cmd->add_option("-o,--output", args->artifact_path, "Write the compiled model as a .kiln artifact here (docs/ARTIFACT.md)");
  cmd->add_option("--emit-onnx", args->onnx_path,
                  "Write the ONNX model with its int8 products (--precision int8) in ONNX's quantization operators, the same "
                  "int8 weights and scales: dynamic matrix products as DynamicQuantizeLinear + MatMulInteger, calibrated "
                  "(--calibrate) ones and convolutions as QuantizeLinear/DequantizeLinear pairs");
  cmd->add_option("--asset", args->assets, "Store a file in the artifact, NAME=PATH (tokenizer, labels; repeatable)");
  cmd->add_option("--warmup-input", args->warmup_inputs,
                  "Warm-up fixture recorded in the artifact, NAME=file.npy|file.pb (repeatable; default: seeded random inputs)");
  add_session_flags(*cmd, args->flags);
  cmd->callback([args, set_exit] { set_exit(run_compile(*args)); });
}

}  // namespace kiln::cli
