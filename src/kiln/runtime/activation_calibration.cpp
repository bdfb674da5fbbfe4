// Static int8 calibration at load (see activation_calibration.h).
#include "kiln/runtime/activation_calibration.h"

#include <functional>

#include "kiln/runtime/input_binding.h"

namespace kiln::runtime {

Result<std::map<std::string, ops::Uint8Quantization>> calibrate_inputs(Engine& float32, const std::set<std::string>& product_inputs,
                                                                       const std::vector<InputSet>& sets, ops::CalibrationMethod method) {
  for (const InputSet& set : sets) KILN_RETURN_IF_ERROR(check_input_set(float32.graph(), set));
  std::map<std::string, ops::ActivationStatistics> statistics;
  // One pass over the sets: `observe` sees each product input as a float32 tensor.
  const auto pass = [&](const std::function<void(ops::ActivationStatistics&, const Tensor&)>& observe) -> Status {
    for (const InputSet& set : sets) {
      for (const auto& [name, tensor] : set.tensors)
        if (product_inputs.count(name) && tensor.dtype() == DType::kFloat) observe(statistics[name], tensor);
      const StepObserver observer = [&](const Step& step, const std::vector<Value>& values) {
        for (size_t i = 0; i < step.outputs.size() && i < step.node->outputs.size(); ++i) {
          const int slot = step.outputs[i];
          if (slot < 0 || !step.node->outputs[i] || !values[static_cast<size_t>(slot)].is_tensor()) continue;
          const Tensor& tensor = values[static_cast<size_t>(slot)].tensor();
          const std::string& name = step.node->outputs[i]->name;
          if (product_inputs.count(name) && tensor.dtype() == DType::kFloat) observe(statistics[name], tensor);
        }
      };
      Result<std::map<std::string, Tensor>> ran = float32.execute_tensors(set.tensors, false, RunOptions{}, observer);
      if (!ran.is_ok()) return ran.status().with_context("calibration on '" + set.source + "'");
    }
    return Status::ok();
  };
  KILN_RETURN_IF_ERROR(pass([](ops::ActivationStatistics& s, const Tensor& t) { s.observe_range(t.data<float>(), t.element_count()); }));
  if (ops::calibration_method_info(method).histogram)
    KILN_RETURN_IF_ERROR(pass([method](ops::ActivationStatistics& s, const Tensor& t) {
      s.observe_histogram(t.data<float>(), t.element_count(), method);
    }));
  std::map<std::string, ops::Uint8Quantization> quantization;
  for (const auto& [name, s] : statistics) {
    if (!s.seen()) continue;
    const auto [low, high] = s.range(method);
    quantization[name] = ops::uint8_quantization(low, high);
  }
  return quantization;
}

}  // namespace kiln::runtime
