// Model inputs and outputs on the command line: --input specs and output .npy files.
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

Result<Tensor> make_input(const Session& session, const SessionOptions& options, const std::string& name,
                          const std::string& spec) {
  const TensorInfo* info = find_input(session, name);
  if (!info) return invalid_argument("--input names '" + name + "', which is not a model input");
  if (spec == "random" || spec.rfind("random:", 0) == 0) {
    uint64_t seed = 0;
    if (spec.size() > 7) {
      const std::string digits = spec.substr(7);
      if (digits.empty() || digits.size() > 18 || digits.find_first_not_of("0123456789") != std::string::npos)
        return invalid_argument("--input " + name + "=" + spec + ": seed must be a non-negative integer");
      seed = std::stoull(digits);
    }
    if (!info->rank_known) return invalid_argument("input '" + name + "' has unknown rank; give --shape " + name + "=...");
    Tensor t = random_tensor(info->dtype, random_shape(*info, options), seed);
    if (!t.defined()) return invalid_argument("cannot make a random tensor for input '" + name + "'");
    return t;
  }
  return read_tensor_file(spec);
}

// "a/b:0" -> "a_b_0": output names become file names inside the output folder.
std::string file_name_for(const std::string& name) {
  std::string s = name;
  for (char& c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.')) c = '_';
  return s.empty() || s[0] == '.' ? "_" + s : s;
}

}  // namespace

Result<std::map<std::string, Tensor>> make_inputs(const Session& session, const SessionOptions& options,
                                                  const std::vector<std::string>& specs) {
  std::map<std::string, Tensor> inputs;
  for (const std::string& s : specs) {
    const size_t eq = s.find('=');
    if (eq == std::string::npos || eq == 0)
      return invalid_argument("--input '" + s + "' must look like NAME=file.npy, NAME=file.pb or NAME=random[:SEED]");
    KILN_ASSIGN_OR_RETURN(Tensor t, make_input(session, options, s.substr(0, eq), s.substr(eq + 1)));
    inputs[s.substr(0, eq)] = std::move(t);
  }
  return inputs;
}

Status add_missing_random_inputs(const Session& session, const SessionOptions& options,
                                 std::map<std::string, Tensor>& inputs) {
  for (const TensorInfo& info : session.inputs()) {
    if (inputs.count(info.name)) continue;
    KILN_ASSIGN_OR_RETURN(inputs[info.name], make_input(session, options, info.name, "random"));
  }
  return Status::ok();
}

Status write_outputs(const std::string& dir, const std::map<std::string, Tensor>& outputs) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return invalid_argument("cannot create output folder '" + dir + "': " + ec.message());
  for (const auto& [name, tensor] : outputs)
    KILN_RETURN_IF_ERROR(write_npy_file((std::filesystem::path(dir) / (file_name_for(name) + ".npy")).string(), tensor));
  return Status::ok();
}

}  // namespace kiln::cli
