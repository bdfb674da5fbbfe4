// `kiln ops [--provider NAME]`: the op types a provider has kernels for, one per line ("<domain>.<op>"
// outside ai.onnx), made for this machine's target. What users ask before bringing a model, and
// the list the per-op speed harness (bench/ops.sh) checks that it covers.
#include <iostream>

#include "kiln/cli/cli_common.h"
#include "kiln/cli/commands.h"
#include "kiln/providers/provider.h"
#include "kiln/target/target.h"
#include "kiln/providers/registry/provider_registry.h"

namespace kiln::cli {

void add_ops_command(CLI::App& app, std::function<void(int)> set_exit) {
  CLI::App* ops = app.add_subcommand("ops", "List the op types a provider has kernels for, one per line");
  auto provider = std::make_shared<std::string>("cpu");
  ops->add_option("--provider", *provider, "cpu (default) or cpu_ref");
  ops->callback([set_exit, provider] {
    const Result<std::shared_ptr<const providers::Provider>> made =
        providers::make_provider(*provider, {target::host_target()});
    if (!made.is_ok()) return set_exit(report_error(made.status()));
    for (const std::string& op : made.value()->op_types()) std::cout << op << "\n";
    set_exit(0);
  });
}

}  // namespace kiln::cli
