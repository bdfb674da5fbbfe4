// Warm-up fixtures and the check of their outputs (see warmup.h).
#include "kiln/runtime/warmup.h"

#include <algorithm>
#include <sstream>

#include "kiln/parity.h"

namespace kiln::runtime {

Result<std::map<std::string, Tensor>> generated_fixture_inputs(const ir::Graph& graph,
                                                               const std::vector<std::vector<int64_t>>& shapes) {
  std::map<std::string, Tensor> inputs;
  for (size_t i = 0; i < graph.inputs.size(); ++i) {
    const ir::Value& input = *graph.inputs[i];
    if (!input.type.is_tensor() || input.type.dtype == DType::kString || i >= shapes.size())
      return invalid_argument("warm-up: input '" + input.name + "' is not a numeric tensor; give its fixture");
    inputs[input.name] = random_tensor(input.type.dtype, shapes[i], i + 1);
  }
  return inputs;
}

Result<WarmupCheck> check_fixture_outputs(const std::map<std::string, Tensor>& recorded,
                                          const std::map<std::string, Tensor>& got) {
  WarmupCheck check;
  for (const auto& [name, want] : recorded) {
    const auto it = got.find(name);
    if (it == got.end()) return integrity_failure("warm-up: the model gave no output '" + name + "', which the artifact recorded");
    const ParityResult parity = compare_tensors(name, it->second, want);
    if (!parity.within(kWarmupTolerance)) {
      std::ostringstream why;
      why << "warm-up: output '" << name << "' differs from the one recorded at compile time: "
          << (parity.comparable ? "relative error " + std::to_string(parity.relative_error()) : parity.mismatch)
          << " (tolerance " << kWarmupTolerance << ")";
      return integrity_failure(why.str());
    }
    check.max_relative_error = std::max(check.max_relative_error, parity.relative_error());
  }
  return check;
}

}  // namespace kiln::runtime
