// `kiln compile MODEL`: runs the pipeline up to the memory plan, prints the evidence summary and
// optionally writes the JSON report and the .kiln artifact (-o).
#include <iostream>
#include <map>

#include "kiln/cli/cli_common.h"
#include "kiln/cli/commands.h"

namespace kiln::cli {

namespace {

struct CompileArgs {
  std::string model;
  std::string report_path;
  std::string artifact_path;
  std::vector<std::string> assets;  // name=path
  SessionFlags flags;
};

// "name=path" pairs -> name -> path; InvalidArgument on bad text.
Result<std::map<std::string, std::string>> parse_assets(const std::vector<std::string>& flags) {
  std::map<std::string, std::string> assets;
  for (const std::string& flag : flags) {
    const size_t eq = flag.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == flag.size())
      return invalid_argument("--asset '" + flag + "' must look like NAME=PATH");
    assets[flag.substr(0, eq)] = flag.substr(eq + 1);
  }
  return assets;
}

int run_compile(const CompileArgs& args) {
  auto options = to_options(args.flags);
  if (!options.is_ok()) return report_error(options.status());
  auto assets = parse_assets(args.assets);
  if (!assets.is_ok()) return report_error(assets.status());
  if (!assets.value().empty() && args.artifact_path.empty())
    return report_error(invalid_argument("--asset needs -o: assets are stored in the .kiln artifact"));
  auto session = Session::load(args.model, options.value());
  if (!session.is_ok()) return report_error(session.status());
  std::cout << session.value()->report_summary() << "\n";
  if (!args.report_path.empty()) {
    Status written = write_text_file(args.report_path, session.value()->report_json());
    if (!written.is_ok()) return report_error(written);
    std::cout << "report     " << args.report_path << "\n";
  }
  if (!args.artifact_path.empty()) {
    Status written = session.value()->write_artifact(args.artifact_path, assets.value());
    if (!written.is_ok()) return report_error(written);
    std::cout << "artifact   " << args.artifact_path << "\n";
  }
  return 0;
}

}  // namespace

void add_compile_command(CLI::App& app, std::function<void(int)> set_exit) {
  auto args = std::make_shared<CompileArgs>();
  CLI::App* cmd = app.add_subcommand("compile", "Import, analyse, optimise, partition and plan a model; report the evidence");
  cmd->add_option("model", args->model, "ONNX model file")->required();
  cmd->add_option("--report", args->report_path, "Write the JSON evidence report here (schema: docs/REPORT.md)");
  cmd->add_option("-o,--output", args->artifact_path, "Write the compiled model as a .kiln artifact here (docs/ARTIFACT.md)");
  cmd->add_option("--asset", args->assets, "Store a file in the artifact, NAME=PATH (tokenizer, labels; repeatable)");
  add_session_flags(*cmd, args->flags);
  cmd->callback([args, set_exit] { set_exit(run_compile(*args)); });
}

}  // namespace kiln::cli
