// cpu kernel for Gather: every (outer, index) pair copies one contiguous row of the data with
// memcpy, rows spread over OpenMP threads (embedding lookups, the class token of ViT). Serves every
// fixed-size dtype; indices are int32 or int64, checked against the axis before anything is copied.
#include <cstring>

#include "kiln/ops/op_helpers.h"
#include "kiln/providers/cpu/cpu_kernels.h"
#include "kiln/providers/cpu/onednn_support.h"

namespace kiln::providers::cpu {
namespace {

Capability gather_supports(const ir::Node& node) {
  Capability c = fixed_size_tensor(node, 0);
  if (!c.supported) return c;
  const ir::Value* indices = node.input(1);
  if (!indices || !indices->type.is_tensor() ||
      (indices->type.dtype != DType::kInt64 && indices->type.dtype != DType::kInt32))
    return Capability::no("Gather indices are not int32 or int64");
  return Capability::yes();
}

// The index values, negative ones counted from the end; an error naming the node when one is out
// of range.
Result<std::vector<int64_t>> checked_indices(ops::KernelContext& ctx, int64_t dim) {
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> indices, ops::read_int64s(*ctx.input(1), "indices"));
  for (int64_t& v : indices) {
    if (v < -dim || v >= dim)
      return ctx.error("index " + std::to_string(v) + " is out of range for an axis of size " + std::to_string(dim));
    if (v < 0) v += dim;
  }
  return indices;
}

Result<ops::Kernel> build_gather(const ir::Node& node) {
  const std::vector<int64_t> data = input_dims(node, 0);
  KILN_ASSIGN_OR_RETURN(const int64_t axis, ops::normalize_axis(node.attr_int("axis", 0), static_cast<int64_t>(data.size())));
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < axis; ++i) outer *= data[static_cast<size_t>(i)];
  for (size_t i = static_cast<size_t>(axis) + 1; i < data.size(); ++i) inner *= data[i];
  const int64_t dim = data[static_cast<size_t>(axis)];
  const size_t row_bytes = static_cast<size_t>(inner) * dtype_size(node.inputs[0]->type.dtype);
  return ops::Kernel([=](ops::KernelContext& ctx) -> Status {
    KILN_ASSIGN_OR_RETURN(const std::vector<int64_t> indices, checked_indices(ctx, dim));
    const auto* src = static_cast<const char*>(ctx.input(0)->raw_data());
    auto* dst = static_cast<char*>(ctx.output(0)->raw_data());
    const int64_t n = static_cast<int64_t>(indices.size()), rows = outer * n;
    const bool parallel = rows > 1 && static_cast<size_t>(rows) * row_bytes > (1 << 16);
#pragma omp parallel for schedule(static) if (parallel)
    for (int64_t row = 0; row < rows; ++row) {
      const int64_t o = row / n, i = row % n;
      std::memcpy(dst + static_cast<size_t>(row) * row_bytes,
                  src + static_cast<size_t>(o * dim + indices[static_cast<size_t>(i)]) * row_bytes, row_bytes);
    }
    return Status::ok();
  });
}

}  // namespace

void add_gather_kernels(CpuKernelTable& table) { table["Gather"] = node_only(gather_supports, build_gather); }

}  // namespace kiln::providers::cpu
