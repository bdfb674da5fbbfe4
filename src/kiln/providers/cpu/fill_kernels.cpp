// cpu kernel for ConstantOfShape of any fixed-size dtype: the node's one value broadcast-copied
// into the output (one fill per row, rows over OpenMP threads). Integer outputs of shape
// subgraphs are shape arithmetic instead (shape_arithmetic.h).
#include <cstring>

#include "kiln/ops/data_movement.h"
#include "kiln/providers/cpu/broadcast_copy.h"
#include "kiln/providers/cpu/cpu_kernels.h"

namespace kiln::providers::cpu {
namespace {

Capability constant_of_shape_supports(const ir::Node& node) {
  const Result<Tensor> value = ops::fill_value(node);
  if (!value.is_ok()) return Capability::no(value.status().message());
  if (value.value().dtype() == DType::kString) return Capability::no("ConstantOfShape of strings");
  return Capability::yes();
}

Result<ops::Kernel> build_constant_of_shape(const ir::Node& node) {
  KILN_ASSIGN_OR_RETURN(Tensor value, ops::fill_value(node));
  return ops::Kernel([value = std::move(value)](ops::KernelContext& ctx) -> Status {
    Tensor& out = *ctx.output(0);
    if (out.dtype() != value.dtype()) return ctx.error("the output's dtype is not the value's");
    if (out.rank() == 0) {
      std::memcpy(out.raw_data(), value.raw_data(), value.byte_size());
      return Status::ok();
    }
    broadcast_copy(value, out);
    return Status::ok();
  });
}

}  // namespace

void add_fill_kernels(CpuKernelTable& table) { table["ConstantOfShape"] = node_only(constant_of_shape_supports, build_constant_of_shape); }

}  // namespace kiln::providers::cpu
