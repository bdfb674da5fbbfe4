// cpu kernel for Det: the reference's elimination (ops/determinant.h), each matrix a task on OpenMP
// threads.
#include "kiln/ops/determinant.h"
#include "kiln/ops/op_helpers.h"
#include "kiln/providers/cpu/cpu_kernels.h"

namespace kiln::providers::cpu {

void add_det_kernels(CpuKernelTable& table) {
  table["Det"] = node_only(
      [](const ir::Node& node) {
        const ir::Value* x = node.input(0);
        return x && x->type.is_tensor() && ops::is_float_dtype(x->type.dtype) ? Capability::yes()
                                                                              : Capability::no("Det of an input that is not a float tensor");
      },
      [](const ir::Node&) -> Result<ops::Kernel> {
        return ops::Kernel([](ops::KernelContext& ctx) { return ops::determinants(ctx, run_on_threads); });
      });
}

}  // namespace kiln::providers::cpu
