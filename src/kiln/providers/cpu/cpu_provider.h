// cpu: the fast CPU provider. oneDNN primitives for convolution, matrix products and pooling,
// with weights prepacked into oneDNN's preferred layouts when a plan is built, and the integer
// shape arithmetic of dynamic-shape exports (shape_arithmetic.h). It declines what it does not
// accelerate, with a reason; the fallback policy decides whether cpu_ref takes it. It is made for
// one Target: it caps oneDNN at the target's level and asks oneDNN what it wants there.
#pragma once

#include "kiln/providers/provider.h"

namespace kiln::providers {

class CpuProvider final : public Provider {
 public:
  // InvalidArgument when oneDNN cannot be capped at `target` any more (onednn_target.h).
  static Result<std::shared_ptr<const Provider>> create(const target::Target& target);

  std::string name() const override { return "cpu"; }
  GraphPreferences graph_preferences() const override { return preferences_; }
  bool runs_generated_kernels() const override { return true; }
  Capability supports(const ir::Node& node) const override;
  Result<ops::Kernel> kernel_for(const ir::Node& node, KernelBuild& build) const override;

 private:
  explicit CpuProvider(GraphPreferences preferences) : preferences_(std::move(preferences)) {}
  // Declines a layout-aware node (kiln.FusedConv, kiln.InLayout) that computes in a layout the
  // target has no vector kernel for (an NCHW16c artifact on an AVX2 machine), or converts between
  // two non-plain layouts.
  Capability runs_layouts_fast(const ir::Node& node) const;
  std::string preferred_names() const;
  GraphPreferences preferences_;
};

}  // namespace kiln::providers
