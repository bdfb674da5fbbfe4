// cpu kernel for ReverseSequence, any fixed-size dtype: for each batch entry b the first
// sequence_lens[b] steps along the time axis are reversed and the rest copied, one memcpy per
// (time, batch) row of the trailing dims, rows over OpenMP threads.
#include <cstring>

#include "kiln/ops/op_helpers.h"
#include "kiln/providers/cpu/cpu_kernels.h"

namespace kiln::providers::cpu {
namespace {

Result<ops::Kernel> build_reverse_sequence(const ir::Node& node) {
  const int64_t batch_axis = node.attr_int("batch_axis", 1), time_axis = node.attr_int("time_axis", 0);
  if (batch_axis == time_axis || batch_axis < 0 || time_axis < 0 || batch_axis > 1 || time_axis > 1)
    return invalid_model(node.describe() + ": batch_axis and time_axis must be 0 and 1 (either order)");
  const size_t bytes = dtype_size(node.inputs[0]->type.dtype);
  return ops::Kernel([=](ops::KernelContext& ctx) -> Status {
    const Tensor& x = *ctx.input(0);
    if (x.rank() < 2) return ctx.error("input must have rank >= 2");
    KILN_ASSIGN_OR_RETURN(const std::vector<int64_t> lens, ops::read_int64s(*ctx.input(1), "sequence_lens"));
    const int64_t steps = x.shape()[static_cast<size_t>(time_axis)], batch = x.shape()[static_cast<size_t>(batch_axis)];
    if (static_cast<int64_t>(lens.size()) != batch) return ctx.error("sequence_lens must have one entry per batch");
    for (int64_t len : lens)
      if (len < 0 || len > steps)
        return ctx.error("sequence length " + std::to_string(len) + " is outside [0, " + std::to_string(steps) + "]");
    const size_t row = static_cast<size_t>(x.element_count() / std::max<int64_t>(steps * batch, 1)) * bytes;
    const auto* src = static_cast<const char*>(x.raw_data());
    auto* dst = static_cast<char*>(ctx.output(0)->raw_data());
    // Row (t, b) of the [d0, d1, ...] view sits at index t * batch + b (time first) or b * steps + t.
    auto at = [&](int64_t t, int64_t b) { return static_cast<size_t>(time_axis == 0 ? t * batch + b : b * steps + t) * row; };
#pragma omp parallel for schedule(static) if (x.byte_size() > (1 << 16))
    for (int64_t i = 0; i < steps * batch; ++i) {
      const int64_t t = i / batch, b = i % batch, len = lens[static_cast<size_t>(b)];
      std::memcpy(dst + at(t, b), src + at(t < len ? len - 1 - t : t, b), row);
    }
    return Status::ok();
  });
}

}  // namespace

void add_reverse_sequence_kernels(CpuKernelTable& table) {
  table["ReverseSequence"] = node_only([](const ir::Node& node) { return fixed_size_tensor(node, 0); }, build_reverse_sequence);
}

}  // namespace kiln::providers::cpu
