// cpu kernels for Expand and Tile, both broadcast copies (broadcast_copy.h) for every fixed-size
// dtype: Tile's output, row-major, is its input viewed as [1, d0, 1, d1, ...] broadcast to
// [r0, d0, r1, d1, ...] (r the repeats).
#include "kiln/providers/cpu/broadcast_copy.h"
#include "kiln/providers/cpu/cpu_kernels.h"

namespace kiln::providers::cpu {
namespace {

Result<ops::Kernel> build_expand(const ir::Node&) {
  return ops::Kernel([](ops::KernelContext& ctx) {
    broadcast_copy(*ctx.input(0), *ctx.output(0));
    return Status::ok();
  });
}

Result<ops::Kernel> build_tile(const ir::Node&) {
  return ops::Kernel([](ops::KernelContext& ctx) -> Status {
    const Tensor& x = *ctx.input(0);
    Tensor& y = *ctx.output(0);
    if (y.element_count() == 0) return Status::ok();
    if (x.shape().size() != y.shape().size()) return ctx.error("output rank differs from the input's");
    std::vector<int64_t> from, to;
    for (size_t d = 0; d < x.shape().size(); ++d) {
      const int64_t in = x.shape()[d], out = y.shape()[d];
      if (in == 0 || out % in != 0) return ctx.error("output dim " + std::to_string(d) + " is not a multiple of the input's");
      from.insert(from.end(), {1, in});
      to.insert(to.end(), {out / in, in});
    }
    Tensor whole = Tensor::view(y.dtype(), to, y.raw_data());
    broadcast_copy(Tensor::view(x.dtype(), from, const_cast<void*>(x.raw_data())), whole);
    return Status::ok();
  });
}

}  // namespace

void add_expand_kernels(CpuKernelTable& table) {
  table["Expand"] = node_only([](const ir::Node& node) { return fixed_size_tensor(node, 0); }, build_expand);
  table["Tile"] = node_only([](const ir::Node& node) { return fixed_size_tensor(node, 0); }, build_tile);
}

}  // namespace kiln::providers::cpu
