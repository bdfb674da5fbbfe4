// Model inputs and outputs on the command line: --input specs, and output .npy/.pb files.
#include "kiln/cli/model_io.h"

#include <cctype>
#include <filesystem>

#include "kiln/tensor_io.h"

namespace kiln::cli {
namespace {

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

// The value `spec` gives input `name`; `flag` (--input, --warmup-input) names the spec's flag.
Result<Value> make_input(const Session& session, const SessionOptions& options, const std::string& flag,
                         const std::string& name, const std::string& spec) {
  const TensorInfo* info = find_input(session, name);
  if (!info) return invalid_argument(flag + " names '" + name + "', which is not a model input");
  if (spec == "random" || spec.rfind("random:", 0) == 0) {
    uint64_t seed = 0;
    if (spec.size() > 7) {
      const std::string digits = spec.substr(7);
      if (digits.empty() || digits.size() > 18 || digits.find_first_not_of("0123456789") != std::string::npos)
        return invalid_argument(flag + " " + name + "=" + spec + ": seed must be a non-negative integer");
      seed = std::stoull(digits);
    }
    if (info->kind != Value::Kind::kTensor)
      return invalid_argument("input '" + name + "' is a " + type_text(*info) + ", which cannot be random; give a " +
                              (info->kind == Value::Kind::kSequence ? "SequenceProto" : "OptionalProto") + " .pb file");
    if (!info->rank_known) return invalid_argument("input '" + name + "' has unknown rank; give --shape " + name + "=...");
    Tensor t = random_tensor(info->dtype, random_shape(*info, options), seed);
    if (!t.defined()) return invalid_argument("cannot make a random tensor for input '" + name + "'");
    return Value(std::move(t));
  }
  Result<Value> value = read_value_file(spec, info->kind, info->dtype);
  if (!value.is_ok()) return value.status().with_context("input '" + name + "'");
  return value;
}

// "a/b:0" -> "a_b_0": output names become file names inside the output folder.
std::string file_name_for(const std::string& name) {
  std::string s = name;
  for (char& c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.')) c = '_';
  return s.empty() || s[0] == '.' ? "_" + s : s;
}

}  // namespace

Result<std::map<std::string, Value>> make_input_values(const Session& session, const SessionOptions& options,
                                                       const std::vector<std::string>& specs, const std::string& flag) {
  std::map<std::string, Value> inputs;
  for (const std::string& s : specs) {
    const size_t eq = s.find('=');
    if (eq == std::string::npos || eq == 0)
      return invalid_argument(flag + " '" + s + "' must look like NAME=file.npy, NAME=file.pb or NAME=random[:SEED]");
    KILN_ASSIGN_OR_RETURN(Value v, make_input(session, options, flag, s.substr(0, eq), s.substr(eq + 1)));
    inputs[s.substr(0, eq)] = std::move(v);
  }
  return inputs;
}

Result<std::map<std::string, Tensor>> make_inputs(const Session& session, const SessionOptions& options,
                                                  const std::vector<std::string>& specs) {
  KILN_ASSIGN_OR_RETURN(auto values, make_input_values(session, options, specs, "--input"));
  std::map<std::string, Tensor> inputs;
  for (auto& [name, value] : values) {
    if (!value.is_tensor())
      return invalid_argument("input '" + name + "' is a " + value.describe() + "; this command runs tensor inputs only");
    inputs[name] = std::move(value.tensor());
  }
  return inputs;
}

Status add_missing_random_inputs(const Session& session, const SessionOptions& options,
                                 std::map<std::string, Tensor>& inputs) {
  for (const TensorInfo& info : session.inputs()) {
    if (inputs.count(info.name)) continue;
    KILN_ASSIGN_OR_RETURN(Value v, make_input(session, options, "--input", info.name, "random"));
    inputs[info.name] = std::move(v.tensor());
  }
  return Status::ok();
}

std::string output_file_name(const std::string& name, const Value& value) {
  return file_name_for(name) + (value.is_tensor() ? ".npy" : ".pb");
}

Status write_outputs(const std::string& dir, const std::map<std::string, Value>& outputs) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return invalid_argument("cannot create output folder '" + dir + "': " + ec.message());
  for (const auto& [name, value] : outputs)
    KILN_RETURN_IF_ERROR(write_value_file((std::filesystem::path(dir) / output_file_name(name, value)).string(), value));
  return Status::ok();
}

}  // namespace kiln::cli
