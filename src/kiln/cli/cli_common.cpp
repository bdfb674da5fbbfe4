// Shared CLI helpers.
#include "kiln/cli/cli_common.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "kiln/artifact/signing.h"
#include "kiln/ops/activation_calibration.h"
#include "kiln/ops/numeric_precision.h"
#include "kiln/target/target.h"
#include "kiln/runtime/shape_profile.h"
#include "kiln/tensor_io.h"

namespace kiln::cli {

void add_session_flags(CLI::App& cmd, SessionFlags& flags) {
  cmd.add_option("--threads", flags.threads, "Kernel threads (0: all cores)")->check(CLI::NonNegativeNumber);
  cmd.add_option("--providers", flags.providers, "Providers in order of preference: cpu, cpu_ref (default: cpu)")->delimiter(',');
  cmd.add_option("--allow-fallback", flags.allow_fallback,
                 "Providers nodes may fall back to (default: none, fail closed)")
      ->delimiter(',');
  cmd.add_flag("--no-optimize", flags.no_optimize, "Skip the optimisation pass pipeline");
  cmd.add_option("--disable-pass", flags.disabled_passes, "Skip a named pass (repeatable)");
  cmd.add_option("--shape", flags.shapes, "Concrete input shape to plan for, NAME=1x3x224x224 (repeatable)");
  cmd.add_flag("--specialize", flags.specialize,
               "Compile for exactly the --shape shapes (other symbolic dims 1); other shapes are rejected");
  cmd.add_flag("--generate-kernels", flags.generate_kernels,
               "graph mode: generate element-wise, normalization and reduction kernels with the host C++ compiler (kiln compile -o embeds them)");
  cmd.add_option("--pubkey", flags.public_key_path, "A .kiln model must be signed with this public key (kiln keygen)");
  cmd.add_flag("--require-signature", flags.require_signature, "Refuse an unsigned .kiln model");
  add_isa_flag(cmd, flags.isa);
  cmd.add_option("--mode", flags.mode,
                 "graph (optimised whole graph, default), eager (node by node, no rewrites), jit (compiled per input "
                 "shape), aot (a .kiln artifact)");
  cmd.add_option("--shape-profile", flags.shape_profile,
                 "Ranges of symbolic input dims, SYMBOL=MIN:OPT:MAX,... (the load-time plan uses OPT)");
  cmd.add_option("--out-of-profile", flags.out_of_profile,
                 "For inputs outside the profile: reject (default), specialize, or pad (every run padded to its bucket)")
      ->check(CLI::IsMember({"reject", "specialize", "pad"}));
  cmd.add_option("--max-variants", flags.max_variants, "Compiled variants (one per input shape) kept, least recently used evicted")
      ->check(CLI::PositiveNumber);
  cmd.add_flag("--tune", flags.tune,
               "Choose among kernels' candidates by timing them on this machine (cached in $KILN_CACHE_DIR/tactics)");
  cmd.add_option("--max-loop-iterations", flags.max_loop_iterations,
                 "Most iterations one Loop may run in a run (default 100000000; 0: unbounded)")
      ->check(CLI::NonNegativeNumber);
  cmd.add_option("--memory-limit", flags.memory_limit,
                 "Most memory the session's buffers may hold at once (weights, packed copies, arenas, outputs): "
                 "2G, 512M, or bytes; a load or run past it is refused before it allocates (default: none)");
  cmd.add_option("--tune-budget-ms", flags.tune_budget_ms, "Time the tuner may spend measuring per session (default 5000)")
      ->check(CLI::NonNegativeNumber);
  cmd.add_option("--precision", flags.precision,
                 "Arithmetic of convolutions and matrix products: " + ops::precision_names() +
                     ", a preference such as int8+bf16, or auto (of fp32 and those this machine has, the fastest within "
                     "--accuracy-budget, default cos=0.995); default fp32; bf16 needs AVX512_BF16; other ops stay fp32");
  cmd.add_option("--keep-fp32", flags.keep_fp32, "Products left in fp32 under --precision: node names or op types (Conv, MatMul, Gemm)")
      ->delimiter(',');
  cmd.add_option("--accuracy-budget", flags.accuracy_budget,
                 "Under --precision, fail unless every output stays within these limits against fp32 on the validation "
                 "inputs: rel=1e-2,abs=0.5,cos=0.999,top1=0.99,top5=1 (any of them)");
  cmd.add_option("--on-budget", flags.on_budget,
                 "What a broken --accuracy-budget does: fail (default), or fallback: keep the products most sensitive to "
                 "the precision (each measured alone) in fp32 until the budget holds")
      ->check(CLI::IsMember({"fail", "fallback"}));
  cmd.add_option("--validation", flags.validation_dir,
                 "Under --precision, measure accuracy against fp32 on these inputs: a folder of NAME.npy|NAME.pb files "
                 "(one set), or of subfolders of them (a set each; default: the --calibrate sets, else the model's example or "
                 "seeded random inputs)");
  cmd.add_option("--calibrate", flags.calibration_dir,
                 "Under --precision int8, quantize the products' inputs with fixed scales calibrated on these inputs (static "
                 "int8; default: each run's own range): a folder laid out as --validation's");
  cmd.add_option("--calibration-method", flags.calibration_method,
                 "How --calibrate chooses each input's range: " + ops::calibration_method_names() + " (default minmax)")
      ->check(CLI::IsMember([] {
        std::vector<std::string> names;
        for (const auto& info : ops::calibration_method_table()) names.push_back(info.name);
        return names;
      }()));
}

void add_isa_flag(CLI::App& cmd, std::string& isa) {
  std::string levels;
  for (const std::string& level : target::isa_level_names()) levels += (levels.empty() ? "" : ", ") + level;
  cmd.add_option("--isa", isa, "Build kernels for this instruction-set level, simulating a lesser machine: " + levels);
}

Result<int64_t> parse_byte_size(const std::string& flag, const std::string& text) {
  const auto bad = [&](const std::string& why) {
    return invalid_argument(flag + " '" + text + "': " + why + " (bytes, or a whole number with K, M, G or T: 512M, 2G)");
  };
  size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  if (digits == 0) return bad("not a size");
  if (digits > 18) return bad("too large");
  const int64_t number = std::stoll(text.substr(0, digits));
  std::string unit = text.substr(digits);
  for (const char* suffix : {"iB", "B"})
    if (unit.size() > 1 && unit.ends_with(suffix)) {
      unit.resize(unit.size() - std::strlen(suffix));
      break;
    }
  static const std::map<std::string, int> kShifts = {{"", 0}, {"K", 10}, {"M", 20}, {"G", 30}, {"T", 40}};
  const auto shift = kShifts.find(unit);
  if (shift == kShifts.end()) return bad("unknown unit '" + text.substr(digits) + "'");
  if (number > (int64_t{1} << (62 - shift->second))) return bad("too large");
  return number << shift->second;
}

Result<std::map<std::string, std::string>> parse_name_values(const std::string& flag, const std::vector<std::string>& values) {
  std::map<std::string, std::string> parsed;
  for (const std::string& v : values) {
    const size_t eq = v.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == v.size())
      return invalid_argument(flag + " '" + v + "' must look like NAME=VALUE");
    parsed[v.substr(0, eq)] = v.substr(eq + 1);
  }
  return parsed;
}

Result<std::map<std::string, Tensor>> read_named_tensors(const std::string& flag, const std::vector<std::string>& values) {
  KILN_ASSIGN_OR_RETURN(const auto paths, parse_name_values(flag, values));
  std::map<std::string, Tensor> tensors;
  for (const auto& [name, path] : paths) {
    Result<Tensor> t = read_tensor_file(path);
    if (!t.is_ok()) return t.status().with_context(flag + " " + name);
    tensors[name] = std::move(t).value();
  }
  return tensors;
}

namespace {

// The tensor files of one folder, by input name (the file name without .npy / .pb).
Result<std::map<std::string, Tensor>> read_tensor_folder(const std::filesystem::path& folder) {
  std::map<std::string, Tensor> tensors;
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(folder))
    if (entry.is_regular_file() && (entry.path().extension() == ".npy" || entry.path().extension() == ".pb")) files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  for (const std::filesystem::path& file : files) {
    Result<Tensor> t = read_tensor_file(file.string());
    if (!t.is_ok()) return t.status().with_context(file.string());
    const std::string name = file.stem().string();
    if (tensors.count(name)) return invalid_argument(file.string() + ": input '" + name + "' given twice (.npy and .pb)");
    tensors[name] = std::move(t).value();
  }
  return tensors;
}

}  // namespace

Result<std::vector<InputSet>> read_input_sets(const std::string& flag, const std::string& dir) {
  std::error_code error;
  if (!std::filesystem::is_directory(dir, error)) return invalid_argument(flag + " " + dir + ": not a folder");
  KILN_ASSIGN_OR_RETURN(auto own, read_tensor_folder(dir));
  if (!own.empty()) return std::vector<InputSet>{{dir, std::move(own)}};
  std::vector<std::filesystem::path> folders;
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    if (entry.is_directory()) folders.push_back(entry.path());
  std::sort(folders.begin(), folders.end());
  std::vector<InputSet> sets;
  for (const std::filesystem::path& folder : folders) {
    KILN_ASSIGN_OR_RETURN(auto tensors, read_tensor_folder(folder));
    if (tensors.empty()) return invalid_argument(flag + " " + folder.string() + ": no NAME.npy or NAME.pb files");
    sets.push_back({folder.string(), std::move(tensors)});
  }
  if (sets.empty()) return invalid_argument(flag + " " + dir + ": no NAME.npy or NAME.pb files, and no subfolders of them");
  return sets;
}

Status validate_on_inputs(SessionOptions& options, const std::vector<std::string>& input_flags) {
  if (!options.validation_inputs.empty() || options.precision == "fp32" || input_flags.empty()) return Status::ok();  // auto too
  KILN_ASSIGN_OR_RETURN(auto given, read_named_tensors("--input", input_flags));
  options.validation_inputs.push_back({"--input", std::move(given)});
  return Status::ok();
}

Result<std::pair<std::string, std::vector<int64_t>>> parse_shape_flag(const std::string& text) {
  const size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0)
    return invalid_argument("--shape '" + text + "' must look like NAME=1x3x224x224");
  std::vector<int64_t> dims;
  const std::string spec = text.substr(eq + 1);
  size_t pos = 0;
  while (pos <= spec.size() && !spec.empty()) {
    const size_t next = spec.find('x', pos);
    const std::string part = spec.substr(pos, next == std::string::npos ? std::string::npos : next - pos);
    if (part.empty() || part.find_first_not_of("0123456789") != std::string::npos || part.size() > 12)
      return invalid_argument("--shape '" + text + "': dim '" + part + "' is not a non-negative integer");
    dims.push_back(std::stoll(part));
    if (next == std::string::npos) break;
    pos = next + 1;
  }
  return std::make_pair(text.substr(0, eq), dims);
}

Result<SessionOptions> to_options(const SessionFlags& flags) {
  SessionOptions options;
  options.threads = flags.threads;
  options.providers = flags.providers;
  options.allow_fallback = flags.allow_fallback;
  options.optimize = !flags.no_optimize;
  options.disabled_passes = flags.disabled_passes;
  options.specialize = flags.specialize;
  options.generate_kernels = flags.generate_kernels;
  options.require_signature = flags.require_signature;
  options.isa = flags.isa;
  options.tune = flags.tune;
  options.tune_budget_ms = flags.tune_budget_ms;
  options.precision = flags.precision;
  options.keep_fp32 = flags.keep_fp32;
  options.accuracy_budget = flags.accuracy_budget;
  options.on_budget = flags.on_budget;
  if (!flags.validation_dir.empty()) {
    KILN_ASSIGN_OR_RETURN(options.validation_inputs, read_input_sets("--validation", flags.validation_dir));
  }
  if (!flags.calibration_dir.empty()) {
    KILN_ASSIGN_OR_RETURN(options.calibration_inputs, read_input_sets("--calibrate", flags.calibration_dir));
  }
  options.calibration_method = flags.calibration_method;
  options.max_variants = flags.max_variants;
  options.max_loop_iterations = flags.max_loop_iterations;
  if (!flags.memory_limit.empty()) {
    KILN_ASSIGN_OR_RETURN(options.memory_limit, parse_byte_size("--memory-limit", flags.memory_limit));
  }
  KILN_ASSIGN_OR_RETURN(options.mode, parse_execution_mode(flags.mode));
  KILN_ASSIGN_OR_RETURN(options.shape_profile, runtime::parse_shape_profile(flags.shape_profile));
  options.out_of_profile = flags.out_of_profile == "specialize" ? OutOfProfile::kSpecialize
                           : flags.out_of_profile == "pad"      ? OutOfProfile::kPad
                                                                : OutOfProfile::kReject;
  if (!flags.public_key_path.empty()) {
    KILN_ASSIGN_OR_RETURN(options.artifact_public_key,
                          artifact::read_key_file(flags.public_key_path, artifact::kPublicKeyBytes));
  }
  for (const std::string& s : flags.shapes) {
    KILN_ASSIGN_OR_RETURN(auto parsed, parse_shape_flag(s));
    options.input_shapes[parsed.first] = parsed.second;
  }
  return options;
}

int report_error(const Status& status) {
  std::cerr << "error (" << status_code_name(status.code()) << "): " << status.message() << "\n";
  return 10 + static_cast<int>(status.code());
}

Status write_text_file(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text << "\n";
    if (!out.good()) {
      std::remove(tmp.c_str());
      return invalid_argument("cannot write '" + path + "'");
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::remove(tmp.c_str());
    return invalid_argument("cannot write '" + path + "': " + ec.message());
  }
  return Status::ok();
}

}  // namespace kiln::cli
