// The artifact's packed section (see packed_weights.h).
#include "kiln/artifact/packed_weights.h"

#include <cstdint>
#include <map>

#include "kiln/artifact/container.h"

namespace kiln::artifact {
namespace {

bool all_inputs_static(const ir::Graph& graph) {
  for (const ir::Value* input : graph.inputs)
    if (!input->type.has_static_shape()) return false;
  return true;
}

// Whether every node of `graph` that reads `value` is among `readers`.
bool read_only_by(const ir::Graph& graph, const ir::Value* value, const std::set<std::string>& readers) {
  for (const auto& node : graph.nodes())
    for (const ir::Value* input : node->inputs)
      if (input == value && !readers.count(node->name)) return false;
  return true;
}

}  // namespace

std::set<std::string> packed_only_values(const ir::Graph& graph, const providers::PlanEvidence& build) {
  std::set<std::string> packed_only;
  // Weights that already exist only packed (packed in place, or an artifact's) have no plain bytes
  // to store.
  for (const auto& [key, packed] : build.packed())
    if (build.packed_only(key.first)) packed_only.insert(key.first);
  if (!all_inputs_static(graph)) return packed_only;
  std::map<std::string, int> layouts;
  for (const auto& [key, packed] : build.packed()) ++layouts[key.first];
  std::set<const ir::Value*> outputs(graph.outputs.begin(), graph.outputs.end());
  for (const auto& [key, readers] : build.packed_readers()) {
    const ir::Value* v = graph.find_value(key.first);
    if (!v || !v->initializer || outputs.count(v) || layouts[key.first] != 1) continue;
    // The initializer becomes a view of the packed bytes (packing only pads), read by no one else.
    if (build.packed().at(key).bytes >= v->initializer->byte_size() && read_only_by(graph, v, readers))
      packed_only.insert(key.first);
  }
  return packed_only;
}

PackedSection encode_packed(const providers::PlanEvidence& build) {
  PackedSection section{{}, nlohmann::json::array()};
  for (const auto& [key, packed] : build.packed()) {
    section.bytes.resize(aligned(section.bytes.size()), '\0');
    section.index.push_back({{"value", packed.value}, {"layout", packed.layout}, {"offset", section.bytes.size()}, {"bytes", packed.bytes}});
    section.bytes.append(static_cast<const char*>(packed.data.get()), packed.bytes);
  }
  return section;
}

Result<std::vector<providers::PackedConstant>> decode_packed(std::string_view bytes, const std::shared_ptr<const char>& owner,
                                                             const nlohmann::json& index) {
  if (!index.is_array()) return integrity_failure("artifact packed weights: the index is not a list");
  std::vector<providers::PackedConstant> packed;
  for (const nlohmann::json& e : index) {
    if (!e.is_object() || !e.contains("value") || !e["value"].is_string() || !e.contains("layout") || !e["layout"].is_string() ||
        !e.contains("offset") || !e["offset"].is_number_unsigned() || !e.contains("bytes") || !e["bytes"].is_number_unsigned())
      return integrity_failure("artifact packed weights: an entry lacks value, layout, offset or bytes");
    const uint64_t offset = e["offset"], size = e["bytes"];
    if (!holds_aligned(bytes, offset, size))
      return integrity_failure("artifact packed weights: entry '" + e["value"].get<std::string>() + "' does not fit its section");
    packed.push_back({e["value"], e["layout"], std::shared_ptr<const void>(owner, bytes.data() + offset), size, nullptr, {}});
  }
  return packed;
}

}  // namespace kiln::artifact
