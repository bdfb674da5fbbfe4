// cpu: the fast CPU provider. oneDNN primitives for convolution, matrix products and pooling,
// with weights prepacked into oneDNN's preferred layouts when a plan is built, and the integer
// shape arithmetic of dynamic-shape exports (shape_arithmetic.h). It declines what it does not
// accelerate, with a reason; the fallback policy decides whether cpu_ref takes it.
#pragma once

#include "kiln/providers/provider.h"

namespace kiln::providers {

class CpuProvider final : public Provider {
 public:
  std::string name() const override { return "cpu"; }
  Capability supports(const ir::Node& node) const override;
  Result<ops::Kernel> kernel_for(const ir::Node& node, KernelBuild& build) const override;
};

// Whether this machine runs the cpu provider's Winograd convolutions (oneDNN has them for AVX-512).
bool cpu_has_winograd_convolutions();

// Activation reorders the cpu kernel of `node` (with concrete shapes) does per run: 2 for a
// convolution it runs by Winograd (input into oneDNN's blocked layout, output back), else 0.
int cpu_kernel_reorders(const ir::Node& node);

}  // namespace kiln::providers
