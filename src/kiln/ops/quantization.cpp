// Linear quantization: QuantizeLinear and DequantizeLinear (per tensor, and per axis since opset
// 13) and DynamicQuantizeLinear. Rounding is to nearest with ties to even; results saturate.
#include <algorithm>
#include <cmath>

#include "kiln/ops/data_movement.h"
#include "kiln/ops/family_support.h"
#include "kiln/ops/op_families.h"
#include "kiln/ops/op_helpers.h"
#include "kiln/ops/op_registry.h"

namespace kiln::ops {

namespace {

using QuantizedTypes = TypeList<uint8_t, int8_t>;

// std::nearbyint rounds ties to even in the default rounding mode.
double round_half_even(double v) { return std::nearbyint(v); }

// The scale / zero point index of flat element i: all 0 per tensor, the axis coordinate per axis.
struct Broadcast {
  int64_t axis_len = 1, inner = 1;
  int64_t at(int64_t i) const { return axis_len == 1 ? 0 : (i / inner) % axis_len; }
};

Result<Broadcast> parameter_layout(const KernelContext& ctx, const Tensor& x, const Tensor& scale) {
  if (scale.element_count() == 1) return Broadcast{};
  if (ctx.opset() < 13 || scale.rank() != 1) return ctx.error("scale must be a scalar (or 1-D per-axis since opset 13)");
  KILN_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(ctx.node().attr_int("axis", 1), x.rank()));
  if (scale.element_count() != x.shape()[axis]) return ctx.error("per-axis scale length must equal the axis size");
  return Broadcast{x.shape()[axis], shape_element_count(std::vector<int64_t>(x.shape().begin() + axis + 1, x.shape().end()))};
}

Status quantize_infer(InferenceContext& ctx) {
  const DType out = ctx.has_input(2) ? ctx.input_type(2).dtype : DType::kUInt8;
  if (out != DType::kUInt8 && out != DType::kInt8) return ctx.error("zero point must be uint8 or int8");
  ctx.set_output_type(0, ir::TensorType{out, ctx.input_type(0).shape});
  return Status::ok();
}

Status quantize_kernel(KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  const Tensor& scale = *ctx.input(1);
  const Tensor* zero = ctx.input(2);
  KILN_ASSIGN_OR_RETURN(Broadcast b, parameter_layout(ctx, x, scale));
  Tensor& y = *ctx.output(0);
  dispatch<QuantizedTypes>(y.dtype(), [&]<class Q>() {
    for (int64_t i = 0; i < x.element_count(); ++i) {
      const int64_t p = b.at(i);
      const double zp = zero ? element_as_double(*zero, p) : 0.0;
      // Float inputs divide in float, as the ONNX reference does (the rounding can differ in double).
      const double ratio = x.dtype() == DType::kFloat
                               ? static_cast<double>(static_cast<float>(element_as_double(x, i)) /
                                                     static_cast<float>(element_as_double(scale, p)))
                               : element_as_double(x, i) / element_as_double(scale, p);
      const double q = round_half_even(ratio) + zp;
      y.data<Q>()[i] = saturating_cast<Q>(q);
    }
  });
  return Status::ok();
}

Status dequantize_infer(InferenceContext& ctx) {
  ctx.set_output_type(0, ir::TensorType{DType::kFloat, ctx.input_type(0).shape});
  return Status::ok();
}

Status dequantize_kernel(KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  const Tensor& scale = *ctx.input(1);
  const Tensor* zero = ctx.input(2);
  KILN_ASSIGN_OR_RETURN(Broadcast b, parameter_layout(ctx, x, scale));
  float* y = ctx.output(0)->data<float>();
  for (int64_t i = 0; i < x.element_count(); ++i) {
    const int64_t p = b.at(i);
    const double zp = zero ? element_as_double(*zero, p) : 0.0;
    y[i] = static_cast<float>((element_as_double(x, i) - zp) * element_as_double(scale, p));
  }
  return Status::ok();
}

Status dynamic_quantize_infer(InferenceContext& ctx) {
  ctx.set_output_type(0, ir::TensorType{DType::kUInt8, ctx.input_type(0).shape});
  ctx.set_output_type(1, ir::make_type(DType::kFloat, {}));
  ctx.set_output_type(2, ir::make_type(DType::kUInt8, {}));
  return Status::ok();
}

Status dynamic_quantize_kernel(KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  const float* in = x.data<float>();
  // The range always includes 0 so that 0 quantizes exactly.
  float lo = 0, hi = 0;
  for (int64_t i = 0; i < x.element_count(); ++i) {
    lo = std::min(lo, in[i]);
    hi = std::max(hi, in[i]);
  }
  const float scale = (hi - lo) / 255.0f;
  const uint8_t zero = scale == 0 ? 0 : saturating_cast<uint8_t>(round_half_even(std::clamp(0.0f - lo / scale, 0.0f, 255.0f)));
  uint8_t* y = ctx.output(0)->data<uint8_t>();
  for (int64_t i = 0; i < x.element_count(); ++i)
    y[i] = scale == 0 ? zero : saturating_cast<uint8_t>(round_half_even(in[i] / scale) + zero);
  if (Tensor* s = ctx.output(1)) s->data<float>()[0] = scale;
  if (Tensor* z = ctx.output(2)) z->data<uint8_t>()[0] = zero;
  return Status::ok();
}

}  // namespace

void register_quantization_ops(OpRegistry& r) {
  for (int v : {10, 13}) {
    r.add({"", "QuantizeLinear", v, with_required_inputs(2, quantize_infer), quantize_kernel});
    r.add({"", "DequantizeLinear", v, with_required_inputs(2, dequantize_infer), dequantize_kernel});
  }
  r.add({"", "DynamicQuantizeLinear", 11, with_required_inputs(1, dynamic_quantize_infer), dynamic_quantize_kernel});
}

}  // namespace kiln::ops
