// KernelBuild: the record of implementations, CPU features and packed constants of a plan's kernels.
#include "kiln/providers/kernel_build.h"

namespace kiln::providers {

KernelBuild::KernelBuild(std::vector<PackedConstant> prepacked, std::set<std::string> packed_only)
    : packed_only_(std::move(packed_only)) {
  for (PackedConstant& p : prepacked) {
    auto key = std::make_pair(p.value, p.layout);
    // The same bytes may come twice (an artifact's, and a plan's record of them): the one that
    // describes its layout is the one to keep.
    const auto it = prepacked_.find(key);
    if (it == prepacked_.end()) prepacked_.emplace(std::move(key), std::move(p));
    else if (!it->second.descriptor.has_value() && p.descriptor.has_value()) it->second = std::move(p);
  }
}

void KernelBuild::record_implementation(const std::string& node, const std::string& name) {
  ++implementations_[name];
  std::string& of_node = node_implementations_[node];
  of_node += (of_node.empty() ? "" : "+") + name;
}

void KernelBuild::require_features(const std::vector<std::string>& features) {
  required_features_.insert(features.begin(), features.end());
}

const PackedConstant* KernelBuild::find_packed(const std::string& value, const std::string& layout, const void* source) const {
  for (const auto* found : {&used_, &prepacked_}) {
    const auto it = found->find({value, layout});
    if (it != found->end() && (!it->second.source || it->second.source == source)) return &it->second;
  }
  return nullptr;
}

const PackedConstant* KernelBuild::packed_with_descriptor(const std::string& value) const {
  for (const auto* found : {&used_, &prepacked_})
    for (const auto& [key, packed] : *found)
      if (key.first == value && packed.descriptor.has_value()) return &packed;
  return nullptr;
}

void KernelBuild::allow_packing_in_place(std::set<std::string> candidates, std::shared_ptr<InPlaceLedger> ledger) {
  in_place_candidates_ = std::move(candidates);
  ledger_ = std::move(ledger);
}

void KernelBuild::record_packed_in_place(const std::string& node, const PackedConstant& packed) {
  record_packed_reader(node, packed);
  ledger_->emplace(packed.value, packed);
  packed_only_.insert(packed.value);
}

void KernelBuild::record_packed_reader(const std::string& node, const PackedConstant& packed) {
  const auto key = std::make_pair(packed.value, packed.layout);
  used_.emplace(key, packed);
  readers_[key].insert(node);
}

Status KernelBuild::check_packed_only_readers(const ir::Graph& graph) const {
  for (const auto& node : graph.nodes())
    for (const ir::Value* input : node->inputs) {
      if (!input || !packed_only(input->name)) continue;
      bool taken = false;
      for (const auto& [key, nodes] : readers_) taken = taken || (key.first == input->name && nodes.count(node->name));
      if (!taken)
        return unsupported_target(node->describe() + " reads weights '" + input->name +
                                  "', which exist only in the layout of the kernel that packed them (an artifact's kernel, "
                                  "chosen when it was compiled, or this session's first plan's), and cannot take that layout; "
                                  "compile the model again for this machine and options");
    }
  return Status::ok();
}

void KernelBuild::set_provider_state(const std::string& provider, std::shared_ptr<ProviderPlanState> state) {
  provider_states_[provider] = std::move(state);
}

ProviderPlanState* KernelBuild::provider_state(const std::string& provider) const {
  const auto it = provider_states_.find(provider);
  return it == provider_states_.end() ? nullptr : it->second.get();
}

std::set<std::string> sole_reader_constants(const ir::Graph& graph) {
  std::map<const ir::Value*, int> reads;
  std::set<std::string> captured;
  for (const auto& node : graph.nodes()) {
    for (const ir::Value* input : node->inputs)
      if (input && input->is_constant()) ++reads[input];
    for (const std::string& name : ir::names_captured_by(*node)) captured.insert(name);
  }
  std::set<std::string> sole;
  for (const auto& [value, count] : reads)
    if (count == 1 && !graph.is_graph_output(value) && !captured.count(value->name)) sole.insert(value->name);
  return sole;
}

}  // namespace kiln::providers
