// kiln.RMSNormalization: ONNX's RMSNormalization (ai.onnx opset 23, newer than the opsets Kiln
// imports) in domain "kiln", where the GGUF frontend's decoders use it:
//   Y = X / sqrt(mean(X^2 over axes axis..rank-1) + epsilon) * scale
// scale broadcasts to the normalized dims X[axis:]. The sum of squares is taken in double; the
// kernel is one pass per row on OpenMP threads (the cpu provider runs it as is).
#include <cmath>
#include <vector>

#include "kiln/ops/elementwise_broadcast.h"
#include "kiln/ops/family_support.h"
#include "kiln/ops/op_families.h"
#include "kiln/ops/op_helpers.h"

namespace kiln::ops {
namespace {

Status rms_norm_rule(InferenceContext& ctx) {
  KILN_RETURN_IF_ERROR(check_input_count(ctx, 2, 2));
  for (size_t i = 0; i < 2; ++i) KILN_RETURN_IF_ERROR(check_input_dtype<FloatTypes>(ctx, i));
  if (ctx.input_type(1).dtype != ctx.input_type(0).dtype) return ctx.error("scale must have X's element type");
  const ir::TensorType& x = ctx.input_type(0);
  if (x.shape && ctx.input_type(1).shape) {
    const int64_t rank = static_cast<int64_t>(x.shape->rank());
    auto axis = normalize_axis(ctx.node().attr_int("axis", -1), rank);
    if (!axis.is_ok()) return ctx.error(axis.status().message());
    const ir::Shape normalized(std::vector<ir::Dim>(x.shape->dims().begin() + axis.value(), x.shape->dims().end()));
    auto b = broadcast_shapes(normalized, *ctx.input_type(1).shape);
    if (!b.is_ok() || b.value().rank() != normalized.rank())
      return ctx.error("scale of shape " + ctx.input_type(1).shape->to_string() + " does not broadcast to the normalized shape " +
                       normalized.to_string());
  }
  ctx.set_output_type(0, x);
  return Status::ok();
}

Status rms_norm_kernel(KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  auto axis = normalize_axis(ctx.node().attr_int("axis", -1), x.rank());
  if (!axis.is_ok()) return ctx.error(axis.status().message());
  const std::vector<int64_t> normalized(x.shape().begin() + axis.value(), x.shape().end());
  const int64_t n = shape_element_count(normalized), rows = n == 0 ? 0 : x.element_count() / n;
  const std::vector<double> scale = broadcast_doubles(ctx.input(1), normalized, 1.0);
  if (n > 0 && scale.empty()) return ctx.error("scale does not broadcast to the normalized shape");
  const double epsilon = ctx.node().attr_float("epsilon", 1e-5f);
  dispatch<FloatTypes>(x.dtype(), [&]<class T>() {
    const T* in = x.data<T>();
    T* out = ctx.output(0)->data<T>();
#pragma omp parallel for if (x.element_count() > (1 << 15))
    for (int64_t r = 0; r < rows; ++r) {
      const T* row = in + r * n;
      double squares = 0;
      for (int64_t i = 0; i < n; ++i) squares += load(row[i]) * load(row[i]);
      const double inv = 1.0 / std::sqrt(squares / static_cast<double>(n) + epsilon);
      for (int64_t i = 0; i < n; ++i) out[r * n + i] = store<T>(load(row[i]) * inv * scale[static_cast<size_t>(i)]);
    }
  });
  return Status::ok();
}

}  // namespace

void register_rms_normalization_ops(OpRegistry& r) {
  r.add(OpDef{"kiln", "RMSNormalization", 1, rms_norm_rule, rms_norm_kernel});
}

}  // namespace kiln::ops
