// Activation layouts: how a convolution region stores its (N, C, spatial...) tensors.
//   NCHW     channels-first, ONNX's own order;
//   NHWC     channels-last, stored [N, spatial..., C];
//   NCHW8c / NCHW16c  oneDNN's blocked layouts (nChw8c, nChw16c), stored [N, C/b, spatial..., b]:
//            channels cut into blocks of b that sit innermost. Only used when b divides C, so a
//            blocked tensor holds exactly the channels-first elements, reordered.
// Shared by the layout-aware ops (kiln.FusedConv, kiln.InLayout, kiln.Relayout), the
// activation_layout pass that chooses a layout per region, and the cpu provider.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kiln/ir/graph.h"
#include "kiln/ir/shape.h"
#include "kiln/status.h"
#include "kiln/tensor.h"

namespace kiln::ops {

struct ActivationLayout {
  enum class Kind { kChannelsFirst, kChannelsLast, kBlocked };
  Kind kind = Kind::kChannelsFirst;
  int64_t block = 0;  // channels per block; only for kBlocked

  static ActivationLayout channels_first() { return {}; }
  static ActivationLayout channels_last() { return {Kind::kChannelsLast, 0}; }
  static ActivationLayout blocked(int64_t block) { return {Kind::kBlocked, block}; }
  // "NCHW", "NHWC", "NCHW8c", "NCHW16c"; nullopt for any other name.
  static std::optional<ActivationLayout> parse(const std::string& name);

  std::string name() const;
  bool is_blocked() const { return kind == Kind::kBlocked; }
  // Rank of the stored tensor for a channels-first tensor of `rank`.
  size_t stored_rank(size_t rank) const { return is_blocked() ? rank + 1 : rank; }
  bool operator==(const ActivationLayout& o) const { return kind == o.kind && block == o.block; }
  bool operator!=(const ActivationLayout& o) const { return !(*this == o); }
};

// The blocked layouts the passes may choose, widest first.
const std::vector<int64_t>& channel_blocks();

// The layout named by a node's attribute (default NCHW); an unknown name is an InvalidModel
// error naming the node and the attribute.
Result<ActivationLayout> layout_attribute(const ir::Node& node, const std::string& attribute);

// kiln.FusedConv's layouts: `layout` for Y (and the residual Z), `input_layout` for X (default:
// the same).
struct ConvLayouts {
  ActivationLayout input, output;
};
Result<ConvLayouts> conv_layouts(const ir::Node& node);

// The stored shape of a channels-first shape (a blocked layout needs a known C that the block
// divides), and back. Errors name what does not fit.
Result<ir::Shape> stored_shape(const ir::Shape& channels_first, ActivationLayout layout);
Result<ir::Shape> channels_first_shape(const ir::Shape& stored, ActivationLayout layout);
// The same for concrete dims (the caller has checked them).
std::vector<int64_t> channels_first_dims(const std::vector<int64_t>& stored, ActivationLayout layout);

// A channels-first tensor copied into `layout`, and a stored tensor copied back to channels-first.
Tensor to_stored(const Tensor& channels_first, ActivationLayout layout);
Tensor to_channels_first(const Tensor& stored, ActivationLayout layout);

}  // namespace kiln::ops
