// Fuzz target: the text parsers for options: shape profiles (runtime::parse_shape_profile), the
// kiln tool's --shape and NAME=VALUE flags, a whole command line of session flags (CLI11, then
// cli::to_options), and --isa levels. The first byte chooses the parser; the rest is its text
// (lines are a flag's values, or a command line's arguments).
#include <algorithm>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "fuzz_support.h"
#include "kiln/cli/cli_common.h"
#include "kiln/runtime/shape_profile.h"
#include "kiln/target/target.h"

namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

void parse_session_command_line(std::vector<std::string> args) {
  CLI::App app("fuzz");
  kiln::cli::SessionFlags flags;
  kiln::cli::add_session_flags(app, flags);
  std::reverse(args.begin(), args.end());  // CLI11 takes them last first
  try {
    app.parse(args);
  } catch (const CLI::ParseError&) {
    return;  // CLI11's classified error: the tool prints it and exits
  }
  flags.public_key_path.clear();  // a path to read, not text to parse
  (void)kiln::cli::to_options(flags);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  kiln::fuzz::FuzzInput input(data, size);
  const uint8_t parser = input.byte();
  const std::string text = input.rest();
  switch (parser % 5) {
    case 0: (void)kiln::runtime::parse_shape_profile(text); break;
    case 1: (void)kiln::cli::parse_shape_flag(text); break;
    case 2: (void)kiln::cli::parse_name_values("--input", lines_of(text)); break;
    case 3: parse_session_command_line(lines_of(text)); break;
    case 4: (void)kiln::target::make_target(text); break;
  }
  return 0;
}
