// Concat in place: placement of each Concat's inputs inside its output's buffer, latest Concat first
// so that an output already placed by a later Concat carries its inputs along.
#include "kiln/runtime/concat_in_place.h"

#include <algorithm>
#include <optional>
#include <vector>

namespace kiln::runtime {

namespace {

using Place = InPlaceConcats::Place;

// Byte offset of each input within the output when every input is a contiguous range of it: the
// dims before the axis are all 1 and every shape is known; nullopt otherwise.
std::optional<std::vector<int64_t>> contiguous_pieces(const ir::Node& node, int64_t alignment) {
  const ir::Value* out = node.outputs.empty() ? nullptr : node.outputs[0];
  if (!out || !out->type.has_static_shape()) return std::nullopt;
  const std::vector<int64_t> dims = out->type.shape->static_dims();
  const auto rank = static_cast<int64_t>(dims.size());
  int64_t axis = node.attr_int("axis", 1);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return std::nullopt;
  for (int64_t d = 0; d < axis; ++d)
    if (dims[static_cast<size_t>(d)] != 1) return std::nullopt;
  std::vector<int64_t> offsets;
  int64_t bytes = 0;
  for (const ir::Value* in : node.inputs) {
    if (!in || !in->type.has_static_shape() || in->type.dtype != out->type.dtype || bytes % alignment != 0) return std::nullopt;
    if (std::count(node.inputs.begin(), node.inputs.end(), in) != 1) return std::nullopt;
    offsets.push_back(bytes);
    bytes += shape_element_count(in->type.shape->static_dims()) * static_cast<int64_t>(dtype_size(in->type.dtype));
  }
  return offsets;
}

}  // namespace

InPlaceConcats place_concats_in_place(const ir::Graph& graph, const std::function<bool(const ir::Value*)>& can_share,
                                      int64_t alignment) {
  InPlaceConcats result;
  auto place_of = [&](const ir::Value* v) -> std::optional<Place> {
    const auto found = result.places.find(v);
    if (found != result.places.end()) return found->second;
    return std::nullopt;
  };
  const auto& nodes = graph.nodes();
  for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) {
    const ir::Node& node = **it;
    if (node.op_type != "Concat" || !node.domain.empty()) continue;
    const std::optional<std::vector<int64_t>> offsets = contiguous_pieces(node, alignment);
    if (!offsets) continue;
    const ir::Value* out = node.outputs[0];
    if (!can_share(out)) continue;
    // Where the output's buffer starts: placed already by a later Concat; else, when its inputs are
    // all placed already, next to each other, where the first one is; else its own buffer.
    std::optional<Place> base = place_of(out);
    const bool inputs_placed = std::all_of(node.inputs.begin(), node.inputs.end(), [&](const ir::Value* in) { return place_of(in).has_value(); });
    if (!base && inputs_placed) base = place_of(node.inputs[0]);
    bool fits = true;
    for (size_t k = 0; k < node.inputs.size(); ++k) {
      const ir::Value* in = node.inputs[k];
      const std::optional<Place> at = place_of(in);
      if (!at) fits = fits && can_share(in) && !result.roots.count(in);
      else fits = fits && base && at->root == base->root && at->byte_offset == base->byte_offset + (*offsets)[k];
    }
    if (!fits) continue;
    const Place start = base.value_or(Place{out, 0});
    if (start.root != out) result.places[out] = start;
    for (size_t k = 0; k < node.inputs.size(); ++k)
      result.places[node.inputs[k]] = Place{start.root, start.byte_offset + (*offsets)[k]};
    result.roots.insert(start.root);
    result.elided.insert(&node);
  }
  return result;
}

}  // namespace kiln::runtime
