// cpu: the fast CPU provider. oneDNN primitives for convolution, matrix products and pooling,
// with weights prepacked into oneDNN's preferred layouts when a plan is built, and the integer
// shape arithmetic of dynamic-shape exports (shape_arithmetic.h). It declines what it does not
// accelerate, with a reason; the fallback policy decides whether cpu_ref takes it. It is made for
// one Target: it caps oneDNN at the target's level and asks oneDNN what it wants there.
#pragma once

#include "kiln/providers/cpu/codegen/kernel_generator.h"
#include "kiln/providers/cpu/cpu_config.h"
#include "kiln/providers/cpu/cpu_plan_state.h"
#include "kiln/providers/provider.h"

namespace kiln::providers {

class CpuProvider final : public Provider {
 public:
  // InvalidArgument when oneDNN cannot be capped at the target any more (onednn_target.h);
  // UnsupportedTarget when kernels are to be generated and no host compiler runs.
  static Result<std::shared_ptr<const Provider>> create(const ProviderConfig& config);

  std::string name() const override { return cpu::kCpuProviderName; }
  std::vector<std::string> op_types() const override;
  ops::GraphPreferences graph_preferences(const std::vector<ops::Precision>& precision = {ops::Precision::kFp32}) const override;
  Capability computes_in(ops::Precision precision, const ir::Node* product = nullptr) const override;
  bool keeps_reduced_activations(ops::Precision precision, const ir::Node& product) const override;
  bool computes_where_kept(ops::Precision precision, const ir::Node& product) const override;
  bool passes_reduced_activations(ops::Precision precision, const ir::Node& node) const override;
  int int8_weight_levels() const override;

  Capability supports(const ir::Node& node) const override;
  Result<ops::Kernel> kernel_for(const ir::Node& node, KernelBuild& build) const override;
  void begin_plan(PlanContext& context) const override;
  Status finish_plan(KernelBuild& build) const override;
  std::optional<GeneratedCodeEvidence> generated_code() const override;

 private:
  CpuProvider(cpu::CpuConfig config, std::shared_ptr<codegen::KernelGenerator> generator)
      : config_(std::move(config)), generator_(std::move(generator)) {}
  // Declines a layout-aware node (kiln.FusedConv, kiln.InLayout) that computes in a layout the
  // target has no vector kernel for (an NCHW16c artifact on an AVX2 machine), or converts between
  // two non-plain layouts.
  Capability runs_layouts_fast(const ir::Node& node) const;
  std::string preferred_names() const;
  // Its target and what oneDNN wants there (cpu_config.h), made once when it is made.
  cpu::CpuConfig config_;
  // Generates kernels from loop IR (generated_kernels.cpp), for the target's features; null when
  // the session does not generate kernels.
  std::shared_ptr<codegen::KernelGenerator> generator_;
};

}  // namespace kiln::providers
