// cpu_ref provider: capability is "the registry has a reference kernel for this op and opset".
#include "kiln/providers/cpu_ref/cpu_ref_provider.h"

#include <algorithm>

namespace kiln::providers {

std::vector<std::string> CpuRefProvider::op_types() const {
  std::vector<std::string> ops;
  for (const auto& [key, versions] : registry_.listing())
    ops.push_back(key.first.empty() ? key.second : key.first + "." + key.second);
  std::sort(ops.begin(), ops.end());
  return ops;
}

Capability CpuRefProvider::supports(const ir::Node& node) const {
  auto def = ops::resolve_op(registry_, node);
  if (!def.is_ok()) return Capability::no(def.status().message());
  for (const ir::Value* in : node.inputs)
    if (in && (in->type.dtype == DType::kComplex64 || in->type.dtype == DType::kComplex128))
      return Capability::no("complex tensors are not supported");
  return Capability::yes();
}

Result<ops::Kernel> CpuRefProvider::kernel_for(const ir::Node& node, KernelBuild&) const {
  KILN_ASSIGN_OR_RETURN(const ops::OpDef* def, ops::resolve_op(registry_, node));
  return def->reference;
}

}  // namespace kiln::providers
