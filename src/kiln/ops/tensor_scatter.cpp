// kiln.TensorScatter: ONNX's TensorScatter (ai.onnx opset 24, newer than the opsets Kiln imports)
// in domain "kiln", the key/value cache update of the GGUF frontend's decoders. past_cache and the
// output have one shape [batch, ..., max_sequence, ...]; update differs only along `axis` (default
// -2, never the batch axis), where it has sequence <= max_sequence entries. For each batch b,
// update's entries are written at write_indices[b] + i (write_indices [batch] int64, zeros when
// absent); `mode` "linear" (default) requires them to fit, "circular" wraps them modulo
// max_sequence. Everything else is past_cache's.
// The output may share past_cache's buffer (OpDef::in_place_input): then only the update is
// written, which is what makes a cache preallocated for the context cost nothing per token.
#include <cstring>
#include <vector>

#include "kiln/ops/data_movement.h"
#include "kiln/ops/family_support.h"
#include "kiln/ops/op_families.h"
#include "kiln/ops/op_helpers.h"

namespace kiln::ops {
namespace {

Result<int64_t> scatter_axis(const ir::Node& node, int64_t rank) {
  KILN_ASSIGN_OR_RETURN(const int64_t axis, normalize_axis(node.attr_int("axis", -2), rank));
  if (axis == 0) return invalid_model(node.describe() + ": axis cannot be 0, the batch axis");
  return axis;
}

Result<bool> circular_mode(const ir::Node& node) {
  const std::string mode = node.attr_string("mode", "linear");
  if (mode != "linear" && mode != "circular")
    return invalid_model(node.describe() + ": mode must be 'linear' or 'circular', got '" + mode + "'");
  return mode == "circular";
}

Status tensor_scatter_rule(InferenceContext& ctx) {
  KILN_RETURN_IF_ERROR(check_input_count(ctx, 2, 3));
  const ir::TensorType& past = ctx.input_type(0);
  const ir::TensorType& update = ctx.input_type(1);
  if (past.dtype == DType::kString) return ctx.error("string caches are not supported");
  if (update.dtype != past.dtype) return ctx.error("update must have past_cache's element type");
  if (ctx.has_input(2) && ctx.input_type(2).dtype != DType::kInt64) return ctx.error("write_indices must be int64");
  auto mode = circular_mode(ctx.node());
  if (!mode.is_ok()) return ctx.error(mode.status().message());
  if (past.shape && update.shape) {
    const int64_t rank = static_cast<int64_t>(past.shape->rank());
    if (update.shape->rank() != past.shape->rank()) return ctx.error("update must have past_cache's rank");
    auto axis = scatter_axis(ctx.node(), rank);
    if (!axis.is_ok()) return ctx.error(axis.status().message());
    for (int64_t d = 0; d < rank; ++d) {
      const ir::Dim& p = past.shape->dims()[static_cast<size_t>(d)];
      const ir::Dim& u = update.shape->dims()[static_cast<size_t>(d)];
      if (!p.is_static() || !u.is_static()) continue;
      if (d == axis.value() ? u.value() > p.value() : u.value() != p.value())
        return ctx.error("update " + update.shape->to_string() + " does not fit past_cache " + past.shape->to_string() +
                         " (equal dims, and at most max_sequence along axis " + std::to_string(axis.value()) + ")");
    }
  }
  ctx.set_output_type(0, past);
  return Status::ok();
}

Status tensor_scatter_kernel(KernelContext& ctx) {
  const Tensor& past = *ctx.input(0);
  const Tensor& update = *ctx.input(1);
  const Tensor* indices = ctx.input(2);
  Tensor& present = *ctx.output(0);
  const int64_t rank = past.rank();
  KILN_ASSIGN_OR_RETURN(const int64_t axis, scatter_axis(ctx.node(), rank));
  KILN_ASSIGN_OR_RETURN(const bool circular, circular_mode(ctx.node()));
  if (update.rank() != rank) return ctx.error("update must have past_cache's rank");
  for (int64_t d = 0; d < rank; ++d)
    if (d == axis ? update.shape()[d] > past.shape()[d] : update.shape()[d] != past.shape()[d])
      return ctx.error("update " + shape_to_string(update.shape()) + " does not fit past_cache " + shape_to_string(past.shape()));
  const int64_t batch = past.shape()[0], capacity = past.shape()[axis], sequence = update.shape()[axis];
  if (indices && indices->shape() != std::vector<int64_t>{batch})
    return ctx.error("write_indices must have shape [" + std::to_string(batch) + "], got " + shape_to_string(indices->shape()));
  std::vector<int64_t> start(static_cast<size_t>(batch), 0);
  for (int64_t b = 0; b < batch && indices; ++b) {
    const int64_t w = indices->data<int64_t>()[b];
    if (w < 0 || (!circular && w + sequence > capacity) || (circular && w >= capacity))
      return ctx.error("write index " + std::to_string(w) + " of batch " + std::to_string(b) + " puts " + std::to_string(sequence) +
                       " entries outside the cache's " + std::to_string(capacity) + " (mode " + (circular ? "circular" : "linear") + ")");
    start[static_cast<size_t>(b)] = w;
  }
  if (present.raw_data() != past.raw_data()) std::memcpy(present.raw_data(), past.raw_data(), past.byte_size());
  // Rows of `row_bytes` (everything after the axis), `outer` groups of them (everything before).
  const int64_t row_bytes = dims_product(past.shape(), static_cast<size_t>(axis) + 1, static_cast<size_t>(rank)) *
                            static_cast<int64_t>(dtype_size(past.dtype()));
  const int64_t outer = dims_product(past.shape(), 0, static_cast<size_t>(axis)), per_batch = outer / std::max<int64_t>(batch, 1);
  const auto* from = static_cast<const std::byte*>(update.raw_data());
  auto* to = static_cast<std::byte*>(present.raw_data());
  for (int64_t o = 0; o < outer; ++o) {
    const int64_t w = start[static_cast<size_t>(o / per_batch)];
    for (int64_t i = 0; i < sequence; ++i) {
      const int64_t at = circular ? (w + i) % capacity : w + i;
      std::memcpy(to + (o * capacity + at) * row_bytes, from + (o * sequence + i) * row_bytes, static_cast<size_t>(row_bytes));
    }
  }
  return Status::ok();
}

}  // namespace

void register_tensor_scatter_ops(OpRegistry& r) {
  OpDef def{"kiln", "TensorScatter", 1, tensor_scatter_rule, tensor_scatter_kernel};
  def.in_place_input = 0;
  r.add(std::move(def));
}

}  // namespace kiln::ops
