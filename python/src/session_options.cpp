// kiln::SessionOptions from the Python layer's options dict (session_options.h).
#include "session_options.h"

#include <pybind11/stl.h>

#include <cstring>
#include <functional>
#include <map>

#include "arrays.h"
#include "status_error.h"

namespace kiln::python {

namespace py = pybind11;

namespace {

template <class T>
T as(const std::string& key, py::handle value) {
  try {
    return value.cast<T>();
  } catch (const py::cast_error&) {
    throw StatusError(invalid_argument("session option '" + key + "': " + std::string(py::repr(value)) + " has the wrong type"));
  }
}

OutOfProfile out_of_profile(const std::string& name) {
  if (name == "reject") return OutOfProfile::kReject;
  if (name == "specialize") return OutOfProfile::kSpecialize;
  if (name == "pad") return OutOfProfile::kPad;
  throw StatusError(invalid_argument("session option 'out_of_profile': '" + name + "' is not reject, specialize or pad"));
}

std::map<std::string, DimRange> shape_profile(py::handle value) {
  std::map<std::string, DimRange> profile;
  for (const auto& [symbol, range] : as<std::map<std::string, std::vector<int64_t>>>("shape_profile", value)) {
    if (range.size() != 3)
      throw StatusError(invalid_argument("session option 'shape_profile': symbol '" + symbol + "' needs (min, opt, max)"));
    profile[symbol] = {range[0], range[1], range[2]};
  }
  return profile;
}

// The accuracy check's or the calibration's input sets (option `key`): a list of {input name:
// array}, each tensor copied (the load reads them; the arrays need not outlive it).
std::vector<InputSet> input_sets(const std::string& key, py::handle value) {
  std::vector<InputSet> sets;
  for (py::handle set : value) {
    InputSet copied{key + "[" + std::to_string(sets.size()) + "]", {}};
    for (const auto& [name, array] : set.cast<py::dict>()) {
      std::vector<py::object> keep_alive;
      const std::string input = as<std::string>(key, name);
      const Tensor view = tensor_from_array(input, array, keep_alive);
      if (view.dtype() == DType::kString) throw StatusError(invalid_argument(key + " input '" + input + "': strings are not measured"));
      Tensor tensor = Tensor::allocate(view.dtype(), view.shape());
      std::memcpy(tensor.raw_data(), view.raw_data(), view.byte_size());
      copied.tensors.emplace(input, std::move(tensor));
    }
    sets.push_back(std::move(copied));
  }
  return sets;
}

}  // namespace

SessionOptions session_options_from_dict(const py::dict& options) {
  SessionOptions o;
  using Setter = std::function<void(const std::string&, py::handle)>;
  const std::map<std::string, Setter> setters = {
      {"mode", [&](auto& k, auto v) { o.mode = value_or_throw(parse_execution_mode(as<std::string>(k, v))); }},
      {"threads", [&](auto& k, auto v) { o.threads = as<int>(k, v); }},
      {"max_variants", [&](auto& k, auto v) { o.max_variants = as<int>(k, v); }},
      {"max_concurrent_runs", [&](auto& k, auto v) { o.max_concurrent_runs = as<int>(k, v); }},
      {"max_loop_iterations", [&](auto& k, auto v) { o.max_loop_iterations = as<int64_t>(k, v); }},
      {"memory_limit", [&](auto& k, auto v) { o.memory_limit = as<int64_t>(k, v); }},
      {"providers", [&](auto& k, auto v) { o.providers = as<std::vector<std::string>>(k, v); }},
      {"allow_fallback", [&](auto& k, auto v) { o.allow_fallback = as<std::vector<std::string>>(k, v); }},
      {"optimize", [&](auto& k, auto v) { o.optimize = as<bool>(k, v); }},
      {"disabled_passes", [&](auto& k, auto v) { o.disabled_passes = as<std::vector<std::string>>(k, v); }},
      {"input_shapes", [&](auto& k, auto v) { o.input_shapes = as<std::map<std::string, std::vector<int64_t>>>(k, v); }},
      {"shape_profile", [&](auto&, auto v) { o.shape_profile = shape_profile(v); }},
      {"out_of_profile", [&](auto& k, auto v) { o.out_of_profile = out_of_profile(as<std::string>(k, v)); }},
      {"specialize", [&](auto& k, auto v) { o.specialize = as<bool>(k, v); }},
      {"public_key", [&](auto& k, auto v) { o.artifact_public_key = as<std::string>(k, v); }},
      {"require_signature", [&](auto& k, auto v) { o.require_signature = as<bool>(k, v); }},
      {"isa", [&](auto& k, auto v) { o.isa = as<std::string>(k, v); }},
      {"generate_kernels", [&](auto& k, auto v) { o.generate_kernels = as<bool>(k, v); }},
      {"tune", [&](auto& k, auto v) { o.tune = as<bool>(k, v); }},
      {"tune_budget_ms", [&](auto& k, auto v) { o.tune_budget_ms = as<double>(k, v); }},
      {"precision", [&](auto& k, auto v) { o.precision = as<std::string>(k, v); }},
      {"keep_fp32", [&](auto& k, auto v) { o.keep_fp32 = as<std::vector<std::string>>(k, v); }},
      {"accuracy_budget", [&](auto& k, auto v) { o.accuracy_budget = as<std::string>(k, v); }},
      {"on_budget", [&](auto& k, auto v) { o.on_budget = as<std::string>(k, v); }},
      {"validation_inputs", [&](auto& k, auto v) { o.validation_inputs = input_sets(k, v); }},
      {"calibration_inputs", [&](auto& k, auto v) { o.calibration_inputs = input_sets(k, v); }},
      {"calibration_method", [&](auto& k, auto v) { o.calibration_method = as<std::string>(k, v); }},
  };
  for (const auto& [key, value] : options) {
    const std::string name = as<std::string>("(key)", key);
    auto setter = setters.find(name);
    if (setter == setters.end()) throw StatusError(invalid_argument("unknown session option '" + name + "'"));
    setter->second(name, value);
  }
  return o;
}

}  // namespace kiln::python
