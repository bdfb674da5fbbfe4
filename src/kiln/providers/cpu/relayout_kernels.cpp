// cpu kernel for kiln.Relayout: one oneDNN reorder between two activation layouts
// (ops/activation_layout.h), built for the plan's shapes and threaded like every oneDNN primitive.
#include "kiln/providers/cpu/cpu_kernels.h"
#include "kiln/providers/cpu/onednn_support.h"

namespace kiln::providers::cpu {
namespace {

using dnnl::memory;

Result<ops::Kernel> build_relayout(const ir::Node& node, KernelBuild& build) {
  KILN_ASSIGN_OR_RETURN(const ops::ActivationLayout from, ops::layout_attribute(node, "from"));
  KILN_ASSIGN_OR_RETURN(const ops::ActivationLayout to, ops::layout_attribute(node, "to"));
  KILN_ASSIGN_OR_RETURN(const memory::desc src, activation_desc(input_dims(node, 0), from));
  KILN_ASSIGN_OR_RETURN(const memory::desc dst, activation_desc(output_dims(node, 0), to));
  const dnnl::reorder::primitive_desc pd(cpu_engine(), src, cpu_engine(), dst);
  return primitive_kernel({node, build}, dnnl::reorder(pd), [src, dst](ops::KernelContext& ctx, PrimitiveArgs& args) {
    args.set(DNNL_ARG_FROM, src, *ctx.input(0));
    args.set(DNNL_ARG_TO, dst, *ctx.output(0));
  });
}

}  // namespace

void add_relayout_kernels(CpuKernelTable& table) {
  table["kiln.Relayout"] = CpuKernel{[](const ir::Node& node) { return float_tensor_of_rank(node, 3, 6); }, build_relayout};
}

}  // namespace kiln::providers::cpu
