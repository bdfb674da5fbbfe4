// cpu_ref: the reference provider. Runs every op in the registry with its plain, exact kernel;
// every other provider is checked against it.
#pragma once

#include "kiln/providers/provider.h"

namespace kiln::providers {

class CpuRefProvider final : public Provider {
 public:
  explicit CpuRefProvider(const ops::OpRegistry& registry) : registry_(registry) {}
  std::string name() const override { return "cpu_ref"; }
  std::vector<std::string> op_types() const override;
  Capability supports(const ir::Node& node) const override;
  Result<ops::Kernel> kernel_for(const ir::Node& node, KernelBuild& build) const override;

 private:
  const ops::OpRegistry& registry_;
};

}  // namespace kiln::providers
