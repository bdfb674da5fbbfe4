// Pieces every `kiln` subcommand shares: session options flags, --shape parsing, error reporting
// with classified exit codes. Built only on the public API (include/kiln).
#pragma once

#include <CLI/CLI.hpp>
#include <map>
#include <string>
#include <vector>

#include "kiln/session.h"
#include "kiln/status.h"

namespace kiln::cli {

// Raw flag values bound by add_session_flags(), turned into SessionOptions by to_options().
struct SessionFlags {
  int threads = 0;
  std::vector<std::string> providers = SessionOptions{}.providers;
  std::vector<std::string> allow_fallback;
  bool no_optimize = false;
  std::vector<std::string> disabled_passes;
  std::vector<std::string> shapes;  // name=1x3x224x224
  bool specialize = false;
  bool generate_kernels = false;
  std::string public_key_path;  // .kiln artifacts: the key they must be signed with
  bool require_signature = false;
  std::string isa;  // instruction-set cap ("" for this machine's best)
  std::string mode = "graph";
  std::string shape_profile;            // batch=1:8:32,seq=1:128:512
  std::string out_of_profile = "reject";
  int max_variants = SessionOptions{}.max_variants;
  bool tune = false;
  double tune_budget_ms = SessionOptions{}.tune_budget_ms;
  int64_t max_loop_iterations = SessionOptions{}.max_loop_iterations;
  std::string memory_limit;  // "2G", "512M", bytes; "" or "0": none
  std::string precision = "fp32";
  std::vector<std::string> keep_fp32;
  std::string accuracy_budget;
  std::string on_budget = "fail";
  std::string validation_dir;  // input sets for the accuracy check (read_input_sets)
  std::string calibration_dir;  // input sets for static int8 calibration (read_input_sets)
  std::string calibration_method = "minmax";
};

void add_session_flags(CLI::App& cmd, SessionFlags& flags);
// --isa LEVEL (target/target.h).
void add_isa_flag(CLI::App& cmd, std::string& isa);
Result<SessionOptions> to_options(const SessionFlags& flags);

// "NAME=VALUE" flags -> NAME -> VALUE; InvalidArgument naming `flag` on bad text.
Result<std::map<std::string, std::string>> parse_name_values(const std::string& flag, const std::vector<std::string>& values);
// "NAME=file.npy|file.pb" flags -> NAME -> the tensor read from the file.
Result<std::map<std::string, Tensor>> read_named_tensors(const std::string& flag, const std::vector<std::string>& values);

// The input sets in folder `dir`: its NAME.npy / NAME.pb files as one set, or, when it has none, each
// subfolder's (in name order) as one set each. InvalidArgument naming `flag` and the folder when
// it is missing, holds no tensor files, or a file cannot be read.
Result<std::vector<InputSet>> read_input_sets(const std::string& flag, const std::string& dir);

// Under a reduced precision without --validation, the command's own --input tensors (all of
// them; a partial set is refused at load, naming the missing input) become the accuracy check's
// validation inputs.
Status validate_on_inputs(SessionOptions& options, const std::vector<std::string>& input_flags);

// "name=1x3x224x224" -> (name, dims); InvalidArgument on bad text.
Result<std::pair<std::string, std::vector<int64_t>>> parse_shape_flag(const std::string& text);

// "2G", "512M", "64K" (powers of 1024; "GiB", "MB"... read the same) or plain bytes -> bytes;
// InvalidArgument naming `flag` on bad text, a negative size or one past 2^62 bytes.
Result<int64_t> parse_byte_size(const std::string& flag, const std::string& text);

// Prints "error (<code>): <message>" to stderr and returns the process exit code for `status`:
// 10 + the StatusCode's value, so scripts can tell an invalid model from a bad input.
int report_error(const Status& status);

// Writes `text` to `path` atomically (temp file + rename).
Status write_text_file(const std::string& path, const std::string& text);

}  // namespace kiln::cli
