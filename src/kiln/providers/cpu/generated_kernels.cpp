// cpu kernels generated from loop IR (jit mode): kiln.ElementwiseChain, Softmax, LogSoftmax,
// LayerNormalization and the Reduce* ops lowered at the plan's concrete shapes (codegen/lowering.h)
// and added to the plan's module; each kernel calls its entry point once the module is built. A
// form with no lowering keeps the library kernel.
#include "kiln/providers/cpu/codegen/kernel_generator.h"
#include "kiln/providers/cpu/codegen/lowering.h"
#include "kiln/providers/cpu/cpu_kernels.h"
#include "kiln/providers/cpu/cpu_plan_state.h"
#include "kiln/providers/cpu/onednn_support.h"

namespace kiln::providers::cpu {
namespace {

std::vector<std::vector<int64_t>> all_input_dims(const ir::Node& node) {
  std::vector<std::vector<int64_t>> dims;
  for (size_t i = 0; i < node.inputs.size(); ++i) dims.push_back(node.input(i) ? input_dims(node, i) : std::vector<int64_t>{});
  return dims;
}

Result<codegen::LoopKernel> lower(const ir::Node& node) {
  if (node.op_type == "ElementwiseChain") return codegen::lower_elementwise_chain(node, all_input_dims(node), output_dims(node, 0));
  if (node.op_type == "Softmax" || node.op_type == "LogSoftmax") return codegen::lower_softmax(node, input_dims(node, 0));
  if (node.op_type == "LayerNormalization") return codegen::lower_layer_norm(node, all_input_dims(node));
  if (node.op_type.starts_with("Reduce")) return codegen::lower_reduction(node, input_dims(node, 0), constant_input(node, 1));
  return unsupported_operator(node.describe() + ": no generated kernel for " + node.op_type);
}

}  // namespace

CpuKernel generated_or(CpuKernel library) {
  return {library.supports, [build = library.build](const ir::Node& node, KernelBuild& kernels) -> Result<ops::Kernel> {
            codegen::ModuleBuilder* module = generated_module(kernels.context);
            if (!module) return build(node, kernels);
            Result<codegen::LoopKernel> lowered = lower(node);
            if (!lowered.is_ok() && lowered.status().code() == StatusCode::kUnsupportedOperator) return build(node, kernels);
            if (!lowered.is_ok()) return lowered.status();
            std::shared_ptr<const codegen::GeneratedKernel> generated = module->add(std::move(lowered.value()));
            kernels.evidence.record_implementation(node.name, "generated:cpp");
            return ops::Kernel([generated](ops::KernelContext& ctx) {
              if (!generated->function) return internal_error(ctx.node().describe() + ": its generated kernel was never built");
              std::vector<const float*> inputs;
              for (size_t i = 0; i < ctx.input_count(); ++i) {  // a kernel loads float inputs only (not axes)
                const Tensor* t = ctx.input(i);
                inputs.push_back(t && t->dtype() == DType::kFloat ? t->data<float>() : nullptr);
              }
              generated->function(inputs.data(), ctx.output(0)->data<float>());
              return Status::ok();
            });
          },
          library.data_inputs};
}

}  // namespace kiln::providers::cpu
