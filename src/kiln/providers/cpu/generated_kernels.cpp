// cpu kernels generated from loop IR (jit mode): kiln.ElementwiseChain lowered at the plan's
// concrete shapes (codegen/loop_ir.h) and added to the plan's module; the kernel calls the entry
// point once the module is built.
#include "kiln/codegen/kernel_generator.h"
#include "kiln/providers/cpu/cpu_kernels.h"
#include "kiln/providers/cpu/onednn_support.h"

namespace kiln::providers::cpu {

Result<ops::Kernel> generated_chain(const ir::Node& node, codegen::ModuleBuilder& module) {
  std::vector<std::vector<int64_t>> input_dims;
  for (size_t i = 0; i < node.inputs.size(); ++i) input_dims.push_back(node.input(i) ? cpu::input_dims(node, i) : std::vector<int64_t>{});
  KILN_ASSIGN_OR_RETURN(codegen::LoopKernel kernel, codegen::lower_elementwise_chain(node, "", input_dims, output_dims(node, 0)));
  std::shared_ptr<const codegen::GeneratedKernel> generated = module.add(std::move(kernel));
  return ops::Kernel([generated](ops::KernelContext& ctx) {
    if (!generated->function) return internal_error(ctx.node().describe() + ": its generated kernel was never built");
    std::vector<const float*> inputs;
    for (size_t i = 0; i < ctx.input_count(); ++i) inputs.push_back(ctx.input(i) ? ctx.input(i)->data<float>() : nullptr);
    generated->function(inputs.data(), ctx.output(0)->data<float>());
    return Status::ok();
  });
}

}  // namespace kiln::providers::cpu
