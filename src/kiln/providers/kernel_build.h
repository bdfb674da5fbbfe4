// KernelBuild: what building one plan's kernels leaves besides the kernels. Providers record the
// implementation they chose for each kernel whose data layout depends on the instruction set, and
// the CPU features that implementation needs: an artifact's target requirement (docs/ARTIFACT.md).
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace kiln::providers {

class KernelBuild {
 public:
  // One kernel runs implementation `name` ("brg:avx512_core"), which needs `features`.
  void record_implementation(const std::string& name, const std::vector<std::string>& features);

  // Implementation name -> kernels using it.
  const std::map<std::string, int64_t>& implementations() const { return implementations_; }
  // Union of the recorded implementations' features, sorted.
  const std::set<std::string>& required_features() const { return required_features_; }

 private:
  std::map<std::string, int64_t> implementations_;
  std::set<std::string> required_features_;
};

}  // namespace kiln::providers
