// cpu kernels that are the reference's own kernel, for ops where that loop is already what a cpu
// kernel would be: nothing to vectorise or spread over threads that it does not already, or work
// too small or too sequential to gain from either. Each entry says which. (Shape arithmetic and
// control flow reuse the reference the same way: shape_arithmetic.cpp, control_flow_kernels.cpp.)
#include "kiln/providers/cpu/cpu_kernels.h"

namespace kiln::providers::cpu {
namespace {

CpuKernel reference_loop() {
  return {[](const ir::Node&) { return Capability::yes(); },
          [](const ir::Node& node, KernelBuild&) -> Result<ops::Kernel> {
            KILN_ASSIGN_OR_RETURN(const ops::OpDef* def, ops::resolve_op(ops::OpRegistry::global(), node));
            return def->reference;
          }};
}

}  // namespace

void add_reference_loop_kernels(CpuKernelTable& table) {
  // No arithmetic: the attribute's tensor, or the input's dims.
  for (const char* op : {"Constant", "Shape", "Size"}) table[op] = reference_loop();
  // Generators from a few scalars, a few thousand values at most (and folded at compile time when
  // their inputs are constants, as exporters write them).
  for (const char* op : {"HannWindow", "HammingWindow", "BlackmanWindow", "MelWeightMatrix"}) table[op] = reference_loop();
  // Loops the reference already runs on OpenMP threads: Hardmax's rows (softmax.cpp), LpPool's
  // (image, channel) planes (pool.cpp).
  for (const char* op : {"Hardmax", "LpPool", "GlobalLpPool"}) table[op] = reference_loop();
  // One pass of data movement each: MaxUnpool scatters every input element once, Col2Im adds every
  // column element once, CenterCropPad copies the kept window once (memory-bound, one pass).
  for (const char* op : {"MaxUnpool", "Col2Im", "CenterCropPad"}) table[op] = reference_loop();
  // Sequential by nature: Unique sorts and deduplicates in first-occurrence order.
  table["Unique"] = reference_loop();
}

}  // namespace kiln::providers::cpu
