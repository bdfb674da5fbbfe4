// The `kiln` subcommands; each file registers one on the CLI11 app and reports its exit code.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>

namespace kiln::cli {

void add_inspect_command(CLI::App& app, std::function<void(int)> set_exit);
void add_compile_command(CLI::App& app, std::function<void(int)> set_exit);
void add_run_command(CLI::App& app, std::function<void(int)> set_exit);
void add_bench_command(CLI::App& app, std::function<void(int)> set_exit);
void add_replay_command(CLI::App& app, std::function<void(int)> set_exit);
void add_artifact_commands(CLI::App& app, std::function<void(int)> set_exit);  // keygen, sign, verify
void add_diff_command(CLI::App& app, std::function<void(int)> set_exit);
void add_cache_command(CLI::App& app, std::function<void(int)> set_exit);  // ls, stats, clear
void add_ops_command(CLI::App& app, std::function<void(int)> set_exit);
void add_generate_command(CLI::App& app, std::function<void(int)> set_exit);  // language models (GGUF)

// `kiln inspect` of a .kiln file: its manifest in human form; returns the exit code.
int inspect_artifact(const std::string& path);

}  // namespace kiln::cli
