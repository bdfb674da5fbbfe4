// PlanEvidence: the record of implementations, CPU features, packed constants and generated code
// of a plan's kernels.
#include "kiln/providers/plan_evidence.h"

namespace kiln::providers {

void PlanEvidence::record_implementation(const std::string& node, const std::string& name) {
  ++implementations_[name];
  std::string& of_node = node_implementations_[node];
  of_node += (of_node.empty() ? "" : "+") + name;
}

void PlanEvidence::require_features(const std::vector<std::string>& features) {
  required_features_.insert(features.begin(), features.end());
}

void PlanEvidence::record_packed_reader(const std::string& node, const PackedConstant& packed) {
  const PackedKey key(packed.value, packed.layout);
  used_.emplace(key, packed);
  readers_[key].insert(node);
}

}  // namespace kiln::providers
