// `kiln inspect MODEL`: opset imports, inputs/outputs with symbolic shapes, op histogram,
// parameter count and bytes; --ir prints the imported IR. A .kiln artifact shows its manifest.
#include <iostream>

#include "kiln/artifact/loader.h"
#include "kiln/cli/cli_common.h"
#include "kiln/cli/commands.h"
#include "kiln/model_info.h"

namespace kiln::cli {

namespace {

struct InspectArgs {
  std::string model;
  bool ir = false;
};

int run_inspect(const InspectArgs& args) {
  if (artifact::is_artifact_file(args.model)) return inspect_artifact(args.model);
  auto info = inspect_model(args.model, args.ir);
  if (!info.is_ok()) return report_error(info.status());
  const ModelInfo& m = info.value();
  std::cout << "model     " << m.path << "\n";
  std::cout << "sha256    " << m.sha256 << "\n";
  std::cout << "producer  " << (m.producer.empty() ? "(none)" : m.producer) << ", ir_version " << m.ir_version << "\n";
  std::cout << "opsets   ";
  for (const auto& [domain, version] : m.opset_imports) std::cout << " " << domain << "=" << version;
  std::cout << "\ninputs\n";
  for (const auto& t : m.inputs) std::cout << "  " << t.name << ": " << type_text(t) << "\n";
  std::cout << "outputs\n";
  for (const auto& t : m.outputs) std::cout << "  " << t.name << ": " << type_text(t) << "\n";
  if (!m.metadata.empty()) std::cout << "metadata\n";
  for (const auto& [key, value] : m.metadata) std::cout << "  " << key << ": " << value << "\n";
  std::cout << "parameters " << m.parameters << " in " << m.parameter_tensors << " tensors (" << m.parameter_bytes
            << " bytes)\n";
  std::cout << "ops (" << m.nodes << " nodes)\n";
  for (const auto& [op, count] : m.op_histogram) std::cout << "  " << op << " " << count << "\n";
  if (args.ir) std::cout << m.ir_text << "\n";
  return 0;
}

}  // namespace

void add_inspect_command(CLI::App& app, std::function<void(int)> set_exit) {
  auto args = std::make_shared<InspectArgs>();
  CLI::App* cmd = app.add_subcommand("inspect", "Show what a model declares: opsets, inputs, outputs, ops, parameters");
  cmd->add_option("model", args->model, "Model (ONNX, GGUF) or .kiln artifact")->required();
  cmd->add_flag("--ir", args->ir, "Print the imported IR");
  cmd->callback([args, set_exit] { set_exit(run_inspect(*args)); });
}

}  // namespace kiln::cli
