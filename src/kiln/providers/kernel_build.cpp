// KernelBuild: the packing protocol between a plan's context and its evidence.
#include "kiln/providers/kernel_build.h"

namespace kiln::providers {

const PackedConstant* KernelBuild::find_packed(const std::string& value, const std::string& layout, const void* source) const {
  for (const auto* found : {&evidence.packed(), &context.prepacked()}) {
    const auto it = found->find({value, layout});
    if (it != found->end() && (!it->second.source || it->second.source == source)) return &it->second;
  }
  return nullptr;
}

const PackedConstant* KernelBuild::packed_with_descriptor(const std::string& value) const {
  for (const auto* found : {&evidence.packed(), &context.prepacked()})
    for (const auto& [key, packed] : *found)
      if (key.first == value && packed.descriptor.has_value()) return &packed;
  return nullptr;
}

void KernelBuild::record_packed_in_place(const std::string& node, const PackedConstant& packed) {
  evidence.record_packed_reader(node, packed);
  evidence.record_packed_only(packed.value);
  context.in_place_ledger().emplace(packed.value, packed);
}

Status check_packed_only_readers(const ir::Graph& graph, const PlanEvidence& evidence) {
  for (const auto& node : graph.nodes())
    for (const ir::Value* input : node->inputs) {
      if (!input || !evidence.packed_only(input->name)) continue;
      bool taken = false;
      for (const auto& [key, nodes] : evidence.packed_readers()) taken = taken || (key.first == input->name && nodes.count(node->name));
      if (!taken)
        return unsupported_target(node->describe() + " reads weights '" + input->name +
                                  "', which exist only in the layout of the kernel that packed them (an artifact's kernel, "
                                  "chosen when it was compiled, or this session's first plan's), and cannot take that layout; "
                                  "compile the model again for this machine and options");
    }
  return Status::ok();
}

}  // namespace kiln::providers
