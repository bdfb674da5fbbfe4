// Entry point of the `kiln` command-line tool: dispatches to one subcommand.
#include <CLI/CLI.hpp>

#include <new>

#include "kiln/cli/cli_common.h"
#include "kiln/cli/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"kiln: compile and run ONNX models with evidence of every stage"};
  app.require_subcommand(1);
  app.set_version_flag("--version", KILN_VERSION);
  int exit_code = 0;
  auto set_exit = [&](int code) { exit_code = code; };
  kiln::cli::add_inspect_command(app, set_exit);
  kiln::cli::add_compile_command(app, set_exit);
  kiln::cli::add_run_command(app, set_exit);
  kiln::cli::add_bench_command(app, set_exit);
  kiln::cli::add_replay_command(app, set_exit);
  kiln::cli::add_artifact_commands(app, set_exit);
  kiln::cli::add_diff_command(app, set_exit);
  kiln::cli::add_cache_command(app, set_exit);
  kiln::cli::add_ops_command(app, set_exit);
  kiln::cli::add_generate_command(app, set_exit);
  try {
    CLI11_PARSE(app, argc, argv);
  } catch (const std::bad_alloc&) {  // memory the tool itself could not have (a session's is classified already)
    return kiln::cli::report_error(kiln::allocation_failure("out of memory"));
  }
  return exit_code;
}
