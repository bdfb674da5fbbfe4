// Softmax, LogSoftmax and Hardmax. Before opset 13 the input is coerced to 2-D at `axis`
// (default 1) and each row of the flattened tail is normalised; from 13 on only `axis` (default -1)
// is. Both are one loop over (outer, n, inner) rows; max-shifted so exp never overflows.
#include <cmath>
#include <limits>

#include "kiln/ops/family_support.h"
#include "kiln/ops/op_families.h"
#include "kiln/ops/op_helpers.h"

namespace kiln::ops {
namespace {

enum class SoftmaxKind { kSoftmax, kLogSoftmax, kHardmax };

int64_t default_axis(int opset) { return opset < 13 ? 1 : -1; }

// The input viewed as [outer, n, inner] with rows of n elements, `inner` apart.
struct Rows {
  int64_t outer = 1, n = 1, inner = 1;
};

Rows rows_of(const std::vector<int64_t>& shape, int64_t axis, int opset) {
  Rows r;
  for (size_t d = 0; d < shape.size(); ++d) {
    const int64_t i = static_cast<int64_t>(d);
    if (i < axis) r.outer *= shape[d];
    else if (i == axis || opset < 13) r.n *= shape[d];
    else r.inner *= shape[d];
  }
  return r;
}

Status softmax_rule(InferenceContext& ctx) {
  KILN_RETURN_IF_ERROR(check_input_count(ctx, 1, 1));
  KILN_RETURN_IF_ERROR(check_input_dtype<FloatTypes>(ctx, 0));
  const ir::TensorType& x = ctx.input_type(0);
  if (x.shape) {
    auto axis = normalize_axis(ctx.node().attr_int("axis", default_axis(ctx.opset())), static_cast<int64_t>(x.shape->rank()));
    if (!axis.is_ok()) return ctx.error(axis.status().message());
  }
  ctx.set_output_type(0, x);
  return Status::ok();
}

template <class T>
void normalize_row(const T* x, T* y, int64_t n, int64_t stride, SoftmaxKind kind) {
  double max = -std::numeric_limits<double>::infinity();
  int64_t argmax = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double v = load(x[i * stride]);
    if (v > max) max = v, argmax = i;
  }
  if (kind == SoftmaxKind::kHardmax) {
    for (int64_t i = 0; i < n; ++i) y[i * stride] = store<T>(i == argmax ? 1.0 : 0.0);
    return;
  }
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += std::exp(load(x[i * stride]) - max);
  const double log_sum = std::log(sum);
  for (int64_t i = 0; i < n; ++i) {
    const double shifted = load(x[i * stride]) - max;
    y[i * stride] = store<T>(kind == SoftmaxKind::kSoftmax ? std::exp(shifted) / sum : shifted - log_sum);
  }
}

Kernel softmax_kernel(SoftmaxKind kind) {
  return [kind](KernelContext& ctx) -> Status {
    const Tensor& x = *ctx.input(0);
    auto axis = normalize_axis(ctx.node().attr_int("axis", default_axis(ctx.opset())), x.rank());
    if (!axis.is_ok()) return ctx.error(axis.status().message());
    const Rows r = rows_of(x.shape(), axis.value(), ctx.opset());
    const bool ok = dispatch<FloatTypes>(x.dtype(), [&]<class T>() {
      const T* in = x.data<T>();
      T* out = ctx.output(0)->data<T>();
#pragma omp parallel for if (x.element_count() > (1 << 16))
      for (int64_t row = 0; row < r.outer * r.inner; ++row) {
        const int64_t base = (row / r.inner) * r.n * r.inner + row % r.inner;
        normalize_row(in + base, out + base, r.n, r.inner, kind);
      }
    });
    if (!ok) return ctx.error(std::string("unsupported element type ") + dtype_name(x.dtype()));
    return Status::ok();
  };
}

}  // namespace

void register_softmax_ops(OpRegistry& r) {
  for (int v : {1, 11, 13}) {
    r.add(OpDef{"", "Softmax", v, softmax_rule, softmax_kernel(SoftmaxKind::kSoftmax)});
    r.add(OpDef{"", "LogSoftmax", v, softmax_rule, softmax_kernel(SoftmaxKind::kLogSoftmax)});
    r.add(OpDef{"", "Hardmax", v, softmax_rule, softmax_kernel(SoftmaxKind::kHardmax)});
  }
}

}  // namespace kiln::ops
