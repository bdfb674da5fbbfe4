// The cpu provider's state for one plan in jit mode: the module its generated kernels join
// (generated_kernels.cpp adds to it, CpuProvider::finish_plan builds it). It is kept in the plan's
// PlanContext as the provider's ProviderPlanState, under the provider's name.
#pragma once

#include <memory>

#include "kiln/providers/cpu/codegen/kernel_generator.h"
#include "kiln/providers/plan_context.h"

namespace kiln::providers::cpu {

inline constexpr const char* kCpuProviderName = "cpu";

struct GeneratedModule final : ProviderPlanState {
  explicit GeneratedModule(std::shared_ptr<codegen::KernelGenerator> generator) : module(std::move(generator)) {}
  codegen::ModuleBuilder module;
};

// The module of the plan built in `context`; null when the cpu provider generates no kernels for it.
inline codegen::ModuleBuilder* generated_module(const PlanContext& context) {
  auto* state = static_cast<GeneratedModule*>(context.provider_state(kCpuProviderName));
  return state ? &state->module : nullptr;
}

}  // namespace kiln::providers::cpu
