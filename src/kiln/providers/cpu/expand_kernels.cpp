// cpu kernel for Expand: a broadcast copy (broadcast_copy.h) for every fixed-size dtype.
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

}  // namespace

void add_expand_kernels(CpuKernelTable& table) {
  table["Expand"] = node_only([](const ir::Node& node) { return fixed_size_tensor(node, 0); }, build_expand);
}

}  // namespace kiln::providers::cpu
