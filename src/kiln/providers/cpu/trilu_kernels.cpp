// cpu kernel for Trilu, any fixed-size dtype: each row of each matrix keeps one contiguous run of
// columns (c - r >= k for the upper triangle, c - r <= k for the lower) copied with memcpy, the
// rest zeroed; rows over OpenMP threads.
#include <algorithm>
#include <cstring>

#include "kiln/ops/op_helpers.h"
#include "kiln/providers/cpu/cpu_kernels.h"

namespace kiln::providers::cpu {
namespace {

Result<ops::Kernel> build_trilu(const ir::Node& node) {
  const bool upper = node.attr_int("upper", 1) != 0;
  const size_t bytes = dtype_size(node.inputs[0]->type.dtype);
  return ops::Kernel([=](ops::KernelContext& ctx) -> Status {
    const Tensor& x = *ctx.input(0);
    if (x.rank() < 2) return ctx.error("input must have rank >= 2");
    int64_t k = 0;
    if (ctx.input(1)) {
      KILN_ASSIGN_OR_RETURN(const std::vector<int64_t> kv, ops::read_int64s(*ctx.input(1), "k"));
      if (kv.size() != 1) return ctx.error("k must hold one value");
      k = kv[0];
    }
    const int64_t rows = x.shape()[x.shape().size() - 2], cols = x.shape().back();
    const int64_t all_rows = rows == 0 ? 0 : x.element_count() / cols;
    const auto* src = static_cast<const char*>(x.raw_data());
    auto* dst = static_cast<char*>(ctx.output(0)->raw_data());
#pragma omp parallel for schedule(static) if (all_rows > 1 && x.byte_size() > (1 << 16))
    for (int64_t row = 0; row < all_rows; ++row) {
      const int64_t r = row % rows;
      // Kept columns [begin, end): c >= r + k (upper) or c <= r + k (lower), clamped to the row.
      const int64_t begin = upper ? std::clamp(r + k, int64_t{0}, cols) : 0;
      const int64_t end = upper ? cols : std::clamp(r + k + 1, int64_t{0}, cols);
      const auto at = static_cast<size_t>(row * cols) * bytes;
      std::memset(dst + at, 0, static_cast<size_t>(begin) * bytes);
      std::memcpy(dst + at + static_cast<size_t>(begin) * bytes, src + at + static_cast<size_t>(begin) * bytes,
                  static_cast<size_t>(std::max<int64_t>(end - begin, 0)) * bytes);
      std::memset(dst + at + static_cast<size_t>(std::max(end, begin)) * bytes, 0, static_cast<size_t>(cols - std::max(end, begin)) * bytes);
    }
    return Status::ok();
  });
}

}  // namespace

void add_trilu_kernels(CpuKernelTable& table) {
  table["Trilu"] = node_only([](const ir::Node& node) { return fixed_size_tensor(node, 0); }, build_trilu);
}

}  // namespace kiln::providers::cpu
