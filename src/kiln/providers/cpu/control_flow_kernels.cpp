// cpu kernels for If, Loop, Scan and SequenceMap: the reference's control-flow logic (branch
// choice, iteration, scan slicing and stacking, one body run per sequence element;
// ops/control_flow.cpp, ops/sequence.cpp) with each body run through plans of the
// session's policy (the plan's body runner, runtime/body_plans.h), so a body's convolutions and
// products run on cpu as the main graph's do. The partitioner placed every body node first.
#include "kiln/providers/cpu/cpu_kernels.h"

namespace kiln::providers::cpu {
namespace {

CpuKernel control_flow_kernel() {
  return {[](const ir::Node&) { return Capability::yes(); },
          [](const ir::Node& node, KernelBuild& build) -> Result<ops::Kernel> {
            KILN_ASSIGN_OR_RETURN(ops::Kernel reference, reference_kernel(node));
            if (!build.context.body_runner()) return internal_error(node.describe() + ": the plan gives no runner for its bodies");
            return ops::Kernel([reference = std::move(reference), runner = build.context.body_runner()](ops::KernelContext& ctx) {
              ctx.set_body_runner(&runner);
              return reference(ctx);
            });
          }};
}

}  // namespace

void add_control_flow_kernels(CpuKernelTable& table) {
  for (const char* op : {"If", "Loop", "Scan", "SequenceMap"}) table[op] = control_flow_kernel();
}

}  // namespace kiln::providers::cpu
