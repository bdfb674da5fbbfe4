// GELU: ONNX's Gelu (opset 20) and kiln.Gelu (domain "kiln"), the form the gelu_fusion pass
// recognises in graphs exported before opset 20; one definition, the same attribute.
// approximate = "none": 0.5 x (1 + erf(x / sqrt 2)); "tanh":
// 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))). Computed in double, stored in x's type.
#include "kiln/ops/elementwise_functions.h"
#include "kiln/ops/data_movement.h"
#include "kiln/ops/family_support.h"
#include "kiln/ops/op_families.h"
#include "kiln/ops/op_helpers.h"
#include "kiln/ops/op_registry.h"

namespace kiln::ops {
namespace {

Status gelu_infer(InferenceContext& ctx) {
  const std::string mode = ctx.node().attr_string("approximate", "none");
  if (mode != "none" && mode != "tanh") return ctx.error("approximate must be none or tanh, got " + mode);
  KILN_RETURN_IF_ERROR(check_input_dtype<FloatTypes>(ctx, 0));
  ctx.set_output_type(0, ctx.input_type(0));
  return Status::ok();
}

Status gelu_kernel(KernelContext& ctx) {
  const ElementwiseFunction& gelu =
      elementwise_function(ctx.node().attr_string("approximate", "none") == "tanh" ? Elementwise::kGeluTanh : Elementwise::kGelu);
  const Tensor& x = *ctx.input(0);
  Tensor& y = *ctx.output(0);
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < x.element_count(); ++i) store_double(y, i, gelu(element_as_double(x, i), 0.0, 0.0, 0.0));
  return Status::ok();
}

}  // namespace

void register_gelu_ops(OpRegistry& r) {
  r.add({"kiln", "Gelu", 1, with_required_inputs(1, gelu_infer), gelu_kernel});
  r.add({"", "Gelu", 20, with_required_inputs(1, gelu_infer), gelu_kernel});
}

}  // namespace kiln::ops
