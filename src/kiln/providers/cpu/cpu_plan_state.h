// The cpu provider's state for one plan, made in CpuProvider::begin_plan and kept in the plan's
// PlanContext as the provider's ProviderPlanState, under the provider's name: the Target its
// kernels choose their instructions from, and in jit mode the module its generated kernels join
// (generated_kernels.cpp adds to it, CpuProvider::finish_plan builds it).
#pragma once

#include <memory>

#include "kiln/providers/cpu/codegen/kernel_generator.h"
#include "kiln/providers/plan_context.h"
#include "kiln/target/target.h"

namespace kiln::providers::cpu {

inline constexpr const char* kCpuProviderName = "cpu";

struct CpuPlanState final : ProviderPlanState {
  CpuPlanState(target::Target t, std::shared_ptr<codegen::KernelGenerator> generator)
      : target(std::move(t)), module(generator ? std::make_unique<codegen::ModuleBuilder>(std::move(generator)) : nullptr) {}
  target::Target target;
  std::unique_ptr<codegen::ModuleBuilder> module;  // null: no generated kernels in this plan
};

// The module of the plan built in `context`; null when the cpu provider generates no kernels for it.
inline codegen::ModuleBuilder* generated_module(const PlanContext& context) {
  auto* state = static_cast<CpuPlanState*>(context.provider_state(kCpuProviderName));
  return state ? state->module.get() : nullptr;
}

// The target of the plan built in `context`; null in a context the cpu provider did not begin (a
// kernel then keeps to the x86-64-v3 baseline).
inline const target::Target* plan_target(const PlanContext& context) {
  auto* state = static_cast<CpuPlanState*>(context.provider_state(kCpuProviderName));
  return state ? &state->target : nullptr;
}

}  // namespace kiln::providers::cpu
