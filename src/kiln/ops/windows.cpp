// Window generators of opset 17: HannWindow, HammingWindow, BlackmanWindow (periodic or
// symmetric, any float output_datatype), as cosine sums w[n] = sum_k a_k cos(2 pi k n / N).
#include <cmath>
#include <numbers>

#include "kiln/ops/data_movement.h"
#include "kiln/ops/op_families.h"
#include "kiln/ops/op_helpers.h"
#include "kiln/ops/op_registry.h"

namespace kiln::ops {

namespace {

DType output_dtype(const ir::Node& node) { return static_cast<DType>(node.attr_int("output_datatype", 1)); }

Status window_infer(InferenceContext& ctx) {
  if (!is_float_dtype(output_dtype(ctx.node())) && !is_integer_dtype(output_dtype(ctx.node())))
    return ctx.error("output_datatype must be a numeric type");
  KILN_ASSIGN_OR_RETURN(auto size, known_int64s(ctx, 0, "size"));
  ctx.set_output_type(0, ir::TensorType{output_dtype(ctx.node()),
                                        ir::Shape({size && size->size() == 1 ? ir::Dim((*size)[0]) : ir::Dim::unknown()})});
  return Status::ok();
}

// A window kernel for the cosine-sum coefficients a0, a1, a2 (signs alternate: a0 - a1 cos + a2 cos).
Kernel cosine_window(double a0, double a1, double a2) {
  return [=](KernelContext& ctx) -> Status {
    Tensor& out = *ctx.output(0);
    const int64_t size = out.element_count();
    const bool periodic = ctx.node().attr_int("periodic", 1) != 0;
    const double n_total = static_cast<double>(periodic ? size : size - 1);
    visit_dtype(out.dtype(), [&]<class T>() {
      if constexpr (!std::is_same_v<T, std::string> && !std::is_same_v<T, bool>)
        for (int64_t n = 0; n < size; ++n) {
          const double x = 2 * std::numbers::pi * static_cast<double>(n) / n_total;
          out.data<T>()[n] = from_double<T>(a0 - a1 * std::cos(x) + a2 * std::cos(2 * x));
        }
    });
    return Status::ok();
  };
}

}  // namespace

void register_window_ops(OpRegistry& r) {
  r.add({"", "HannWindow", 17, with_required_inputs(1, window_infer), cosine_window(0.5, 0.5, 0)});
  r.add({"", "HammingWindow", 17, with_required_inputs(1, window_infer), cosine_window(25.0 / 46, 21.0 / 46, 0)});
  r.add({"", "BlackmanWindow", 17, with_required_inputs(1, window_infer), cosine_window(0.42, 0.5, 0.08)});
}

}  // namespace kiln::ops
