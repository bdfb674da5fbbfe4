// KernelBuild: the record of implementations and CPU features a plan's kernels need.
#include "kiln/providers/kernel_build.h"

namespace kiln::providers {

void KernelBuild::record_implementation(const std::string& name, const std::vector<std::string>& features) {
  ++implementations_[name];
  required_features_.insert(features.begin(), features.end());
}

}  // namespace kiln::providers
