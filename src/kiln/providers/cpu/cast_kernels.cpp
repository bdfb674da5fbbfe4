// cpu kernel for Cast and CastLike between the numeric, bool, 8-bit float and 4-bit integer
// types: the reference's element conversion (ops/cast.h) over Kiln's parallel element-wise loop.
// Strings run the reference's loop (reference_loop_kernels.cpp).
#include "kiln/ops/cast.h"
#include "kiln/providers/cpu/broadcast_loop.h"
#include "kiln/providers/cpu/cpu_kernels.h"

namespace kiln::providers::cpu {
namespace {

using CastTypes = ops::ConcatTypes<ops::NumericOrBoolTypes, ops::NarrowTypes>;

Capability cast_supports(const ir::Node& node) {
  const ir::Value* in = node.input(0);
  const ir::Value* out = node.outputs.empty() ? nullptr : node.outputs[0];
  if (!in || !out || !in->type.is_tensor() || !out->type.is_tensor()) return Capability::no(node.op_type + " of a value that is not a tensor");
  for (const ir::Value* v : {in, out})
    if (!ops::list_has(CastTypes{}, v->type.dtype))
      return Capability::no(node.op_type + " from or to " + dtype_name(v->type.dtype) + " (cpu casts numbers and bools)");
  return Capability::yes();
}

Result<ops::Kernel> build_cast(const ir::Node& node) {
  ops::Kernel kernel;
  const bool saturate = ops::cast_saturates(node);
  ops::dispatch<CastTypes>(node.input(0)->type.dtype, [&]<class From>() {
    ops::dispatch<CastTypes>(node.outputs[0]->type.dtype, [&]<class To>() {
      kernel = [saturate](ops::KernelContext& ctx) {
        const Tensor& in = *ctx.input(0);
        Tensor& out = *ctx.output(0);
        if (in.element_count() != out.element_count()) return ctx.error("input and output sizes differ");
        broadcast_loop(out.data<To>(), out.shape(), [saturate](From v) { return ops::convert_number<To>(v, saturate); },
                       Operand<From>{in.data<From>(), out.shape()});
        return Status::ok();
      };
    });
  });
  return kernel;
}

}  // namespace

void add_cast_kernels(CpuKernelTable& table) {
  table["Cast"] = node_only(cast_supports, build_cast);
  table["CastLike"] = node_only(cast_supports, build_cast);
}

}  // namespace kiln::providers::cpu
