// cpu kernels for the ops that only relabel a tensor's shape (Reshape, Flatten, Squeeze,
// Unsqueeze, Identity): one memcpy of the data, for any fixed-size element type.
#include <cstring>

#include "kiln/providers/cpu/cpu_kernels.h"

namespace kiln::providers::cpu {
namespace {

Result<ops::Kernel> build_copy(const ir::Node&) {
  return ops::Kernel([](ops::KernelContext& ctx) {
    const Tensor& x = *ctx.input(0);
    Tensor& y = *ctx.output(0);
    if (x.byte_size() != y.byte_size()) return ctx.error("input and output sizes differ");
    if (y.raw_data() != x.raw_data()) std::memcpy(y.raw_data(), x.raw_data(), x.byte_size());
    return Status::ok();
  });
}

}  // namespace

void add_copy_kernels(CpuKernelTable& table) {
  for (const char* op : {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity"}) table[op] = node_only([](const ir::Node& node) { return fixed_size_tensor(node, 0); }, build_copy);
}

}  // namespace kiln::providers::cpu
