// Activation layouts: names, stored shapes and the copies between layouts.
#include "kiln/ops/activation_layout.h"

#include "kiln/ops/channels_last.h"

namespace kiln::ops {
namespace {

// Blocked storage [N, C/b, S..., b] from the channels-first order: [N, C/b, b, S...] permuted.
std::vector<int64_t> blocked_from_split(size_t split_rank) {
  std::vector<int64_t> perm{0, 1};
  for (size_t d = 3; d < split_rank; ++d) perm.push_back(static_cast<int64_t>(d));
  perm.push_back(2);
  return perm;
}

std::vector<int64_t> split_from_blocked(size_t blocked_rank) {
  std::vector<int64_t> perm{0, 1, static_cast<int64_t>(blocked_rank) - 1};
  for (size_t d = 2; d + 1 < blocked_rank; ++d) perm.push_back(static_cast<int64_t>(d));
  return perm;
}

}  // namespace

std::optional<ActivationLayout> ActivationLayout::parse(const std::string& name) {
  if (name == "NCHW") return channels_first();
  if (name == "NHWC") return channels_last();
  for (int64_t b : channel_blocks())
    if (name == "NCHW" + std::to_string(b) + "c") return blocked(b);
  return std::nullopt;
}

std::string ActivationLayout::name() const {
  switch (kind) {
    case Kind::kChannelsFirst: return "NCHW";
    case Kind::kChannelsLast: return "NHWC";
    case Kind::kBlocked: return "NCHW" + std::to_string(block) + "c";
  }
  return "?";
}

const std::vector<int64_t>& channel_blocks() {
  static const std::vector<int64_t> blocks{16, 8};
  return blocks;
}

Result<ActivationLayout> layout_attribute(const ir::Node& node, const std::string& attribute) {
  const std::string name = node.attr_string(attribute, "NCHW");
  const std::optional<ActivationLayout> layout = ActivationLayout::parse(name);
  if (!layout) return invalid_model(node.describe() + ": " + attribute + " must be NCHW, NHWC, NCHW8c or NCHW16c, got " + name);
  return *layout;
}

Result<ConvLayouts> conv_layouts(const ir::Node& node) {
  KILN_ASSIGN_OR_RETURN(const ActivationLayout output, layout_attribute(node, "layout"));
  if (!node.has_attr("input_layout")) return ConvLayouts{output, output};
  KILN_ASSIGN_OR_RETURN(const ActivationLayout input, layout_attribute(node, "input_layout"));
  return ConvLayouts{input, output};
}

Result<ir::Shape> stored_shape(const ir::Shape& channels_first, ActivationLayout layout) {
  const size_t rank = channels_first.rank();
  if (layout.kind == ActivationLayout::Kind::kChannelsFirst) return channels_first;
  if (rank < 3) return invalid_model("a " + layout.name() + " tensor needs rank 3 or more, got " + channels_first.to_string());
  if (layout.kind == ActivationLayout::Kind::kChannelsLast) return permuted(channels_first, to_channels_last(rank));
  const ir::Dim& c = channels_first.dims()[1];
  if (!c.is_static() || c.value() % layout.block != 0)
    return invalid_model(layout.name() + " needs channels divisible by " + std::to_string(layout.block) + ", got " +
                         channels_first.to_string());
  std::vector<ir::Dim> dims = channels_first.dims();
  dims[1] = ir::Dim(c.value() / layout.block);
  dims.push_back(ir::Dim(layout.block));
  return ir::Shape(std::move(dims));
}

Result<ir::Shape> channels_first_shape(const ir::Shape& stored, ActivationLayout layout) {
  const size_t rank = stored.rank();
  if (layout.kind == ActivationLayout::Kind::kChannelsFirst) return stored;
  if (rank < 3 + (layout.is_blocked() ? 1 : 0))
    return invalid_model("a " + layout.name() + " tensor cannot have shape " + stored.to_string());
  if (layout.kind == ActivationLayout::Kind::kChannelsLast) return permuted(stored, to_channels_first(rank));
  const ir::Dim& blocks = stored.dims()[1];
  const ir::Dim& block = stored.dims().back();
  if (!block.is_static() || block.value() != layout.block)
    return invalid_model("a " + layout.name() + " tensor must end in a dim of " + std::to_string(layout.block) + ", got " +
                         stored.to_string());
  std::vector<ir::Dim> dims(stored.dims().begin(), stored.dims().end() - 1);
  dims[1] = blocks.is_static() ? ir::Dim(blocks.value() * layout.block) : ir::Dim::unknown();
  return ir::Shape(std::move(dims));
}

std::vector<int64_t> channels_first_dims(const std::vector<int64_t>& stored, ActivationLayout layout) {
  std::vector<ir::Dim> dims(stored.begin(), stored.end());
  return channels_first_shape(ir::Shape(std::move(dims)), layout).value().static_dims();
}

Tensor to_stored(const Tensor& channels_first, ActivationLayout layout) {
  const size_t rank = channels_first.rank();
  switch (layout.kind) {
    case ActivationLayout::Kind::kChannelsFirst: return channels_first;
    case ActivationLayout::Kind::kChannelsLast: return permute_tensor(channels_first, to_channels_last(rank));
    case ActivationLayout::Kind::kBlocked: break;
  }
  std::vector<int64_t> split = channels_first.shape();
  split[1] /= layout.block;
  split.insert(split.begin() + 2, layout.block);
  return permute_tensor(channels_first.reshaped(split), blocked_from_split(split.size()));
}

Tensor to_channels_first(const Tensor& stored, ActivationLayout layout) {
  const size_t rank = stored.rank();
  switch (layout.kind) {
    case ActivationLayout::Kind::kChannelsFirst: return stored;
    case ActivationLayout::Kind::kChannelsLast: return permute_tensor(stored, to_channels_first(rank));
    case ActivationLayout::Kind::kBlocked: break;
  }
  const Tensor split = permute_tensor(stored, split_from_blocked(rank));
  std::vector<int64_t> dims = split.shape();
  dims[1] *= dims[2];
  dims.erase(dims.begin() + 2);
  return split.reshaped(dims);
}

}  // namespace kiln::ops
