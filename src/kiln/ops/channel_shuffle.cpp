// kiln.ChannelShuffle (domain "kiln"): ShuffleNet's channel shuffle as one op (channel_shuffle.h).
// Attributes: `groups` (> 1, dividing the channels) and `layout`: NCHW (channels on axis 1, the
// default) or NHWC (channels on the last axis: the form activation_layout gives a shuffle inside a
// channels-last region). Any element type; the output has the input's type and shape.
#include "kiln/ops/channel_shuffle.h"

#include "kiln/ops/data_movement.h"
#include "kiln/ops/op_families.h"
#include "kiln/ops/op_helpers.h"
#include "kiln/ops/op_registry.h"

namespace kiln::ops {
namespace {

// The channel axis of a rank-`rank` tensor under the node's layout.
Result<size_t> channel_axis(const ir::Node& node, size_t rank) {
  const std::string layout = node.attr_string("layout", "NCHW");
  if (layout != "NCHW" && layout != "NHWC") return invalid_model(node.describe() + ": layout must be NCHW or NHWC, got " + layout);
  if (rank < 2) return invalid_model(node.describe() + ": needs a tensor of rank 2 or more");
  return layout == "NCHW" ? size_t{1} : rank - 1;
}

Status channel_shuffle_infer(InferenceContext& ctx) {
  const ir::TensorType& x = ctx.input_type(0);
  const int64_t groups = ctx.node().attr_int("groups", 0);
  if (groups < 2) return ctx.error("groups must be 2 or more, got " + std::to_string(groups));
  if (x.shape) {
    KILN_ASSIGN_OR_RETURN(const size_t axis, channel_axis(ctx.node(), x.shape->rank()));
    const ir::Dim& c = (*x.shape)[axis];
    if (c.is_static() && c.value() % groups != 0)
      return ctx.error(std::to_string(c.value()) + " channels do not split into " + std::to_string(groups) + " groups");
  }
  ctx.set_output_type(0, x);
  return Status::ok();
}

Status channel_shuffle_kernel(KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  if (x.dtype() == DType::kString) return ctx.error("string tensors are not shuffled");
  KILN_ASSIGN_OR_RETURN(const ChannelShuffleView v, channel_shuffle_view(ctx.node(), x.shape()));
  shuffle_channels(x.raw_data(), ctx.output(0)->raw_data(), v.outer, v.channels, v.inner, v.groups, dtype_size(x.dtype()), false);
  return Status::ok();
}

}  // namespace

Result<ChannelShuffleView> channel_shuffle_view(const ir::Node& node, const std::vector<int64_t>& dims) {
  KILN_ASSIGN_OR_RETURN(const size_t axis, channel_axis(node, dims.size()));
  ChannelShuffleView v;
  v.groups = node.attr_int("groups", 0);
  v.channels = dims[axis];
  if (v.groups < 2 || v.channels % v.groups != 0)
    return invalid_model(node.describe() + ": " + std::to_string(v.channels) + " channels do not split into " +
                         std::to_string(v.groups) + " groups");
  v.outer = dims_product(dims, 0, axis);
  v.inner = dims_product(dims, axis + 1, dims.size());
  return v;
}

void register_channel_shuffle_ops(OpRegistry& r) {
  r.add({"kiln", "ChannelShuffle", 1, with_required_inputs(1, channel_shuffle_infer), channel_shuffle_kernel});
}

}  // namespace kiln::ops
