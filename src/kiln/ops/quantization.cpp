// Linear quantization: QuantizeLinear and DequantizeLinear (per tensor, and per axis since opset
// 13), DynamicQuantizeLinear, and the integer products MatMulInteger, ConvInteger, QLinearMatMul
// and QLinearConv (the float reference MatMul/Conv on exact centred values, then requantised).
// Rounding is to nearest with ties to even; results saturate.
#include <algorithm>
#include <cmath>

#include "kiln/ops/data_movement.h"
#include "kiln/ops/evaluate.h"
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

// ---- integer and quantized products: the float reference MatMul/Conv on exact centred values ----

// q - zero_point as doubles (exact for 8-bit data); the zero point is a scalar or a 1-D tensor
// along `axis` of q (per row, column or output channel).
Result<Tensor> centred(const KernelContext& ctx, const Tensor& q, const Tensor* zero, int64_t axis) {
  Tensor out = Tensor::allocate(DType::kDouble, q.shape());
  Broadcast b;
  if (zero && zero->element_count() > 1) {
    KILN_ASSIGN_OR_RETURN(int64_t a, normalize_axis(axis, q.rank()));
    if (zero->element_count() != q.shape()[a]) return ctx.error("zero point length does not match its axis");
    b = Broadcast{q.shape()[a], shape_element_count(std::vector<int64_t>(q.shape().begin() + a + 1, q.shape().end()))};
  }
  for (int64_t i = 0; i < q.element_count(); ++i)
    out.data<double>()[i] = element_as_double(q, i) - (zero ? element_as_double(*zero, b.at(i)) : 0.0);
  return out;
}

// Runs ai.onnx `op_type` (MatMul or Conv, with this node's attributes) on double tensors.
Result<Tensor> float_reference(const KernelContext& ctx, const std::string& op_type, const Tensor& a, const Tensor& b) {
  std::map<std::string, ir::Attribute> attributes = ctx.node().attributes;
  KILN_ASSIGN_OR_RETURN(std::vector<Tensor> out, evaluate_op(op_type, {&a, &b}, attributes, op_type == "Conv" ? 11 : 13));
  return out[0];
}

// The output shape of the float op `op_type` (with this node's attributes) on inputs a and b,
// given `dtype`: the integer ops shape their results exactly as MatMul and Conv do.
Status infer_like(InferenceContext& ctx, const std::string& op_type, size_t a, size_t b, DType dtype) {
  ir::Node node = ctx.node();
  node.op_type = op_type;
  node.domain = "";
  node.opset_version = op_type == "Conv" ? 11 : 13;
  node.outputs.resize(1);
  ir::TensorType ta{DType::kFloat, ctx.input_type(a).shape}, tb{DType::kFloat, ctx.input_type(b).shape};
  InferenceContext like(node, {&ta, &tb}, {nullptr, nullptr});
  KILN_RETURN_IF_ERROR(OpRegistry::global().find("", op_type, node.opset_version)->infer(like));
  ctx.set_output_type(0, ir::TensorType{dtype, like.output_types()[0].shape});
  return Status::ok();
}

Status matmul_integer_kernel(KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Tensor a, centred(ctx, *ctx.input(0), ctx.input(2), -2));
  KILN_ASSIGN_OR_RETURN(Tensor b, centred(ctx, *ctx.input(1), ctx.input(3), -1));
  KILN_ASSIGN_OR_RETURN(Tensor y, float_reference(ctx, "MatMul", a, b));
  for (int64_t i = 0; i < y.element_count(); ++i) ctx.output(0)->data<int32_t>()[i] = static_cast<int32_t>(y.data<double>()[i]);
  return Status::ok();
}

Status conv_integer_kernel(KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Tensor x, centred(ctx, *ctx.input(0), ctx.input(2), 1));
  KILN_ASSIGN_OR_RETURN(Tensor w, centred(ctx, *ctx.input(1), ctx.input(3), 0));
  KILN_ASSIGN_OR_RETURN(Tensor y, float_reference(ctx, "Conv", x, w));
  for (int64_t i = 0; i < y.element_count(); ++i) ctx.output(0)->data<int32_t>()[i] = static_cast<int32_t>(y.data<double>()[i]);
  return Status::ok();
}

// Requantizes an exact product: y = saturate(round(acc * a_scale * b_scale[c] / y_scale) + y_zero),
// with b's scale per output channel along `channel_axis` of y when it has more than one element.
Status requantize(KernelContext& ctx, const Tensor& acc, const Tensor& a_scale, const Tensor& b_scale,
                  const Tensor& y_scale, const Tensor& y_zero, int64_t channel_axis) {
  Broadcast b;
  if (b_scale.element_count() > 1) {
    KILN_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(channel_axis, acc.rank()));
    b = Broadcast{acc.shape()[axis], shape_element_count(std::vector<int64_t>(acc.shape().begin() + axis + 1, acc.shape().end()))};
  }
  Tensor& y = *ctx.output(0);
  dispatch<QuantizedTypes>(y.dtype(), [&]<class Q>() {
    for (int64_t i = 0; i < acc.element_count(); ++i) {
      const double multiplier = element_as_double(a_scale, 0) * element_as_double(b_scale, b.at(i)) / element_as_double(y_scale, 0);
      y.data<Q>()[i] = saturating_cast<Q>(round_half_even(acc.data<double>()[i] * multiplier) + element_as_double(y_zero, 0));
    }
  });
  return Status::ok();
}

// QLinearMatMul(a, a_scale, a_zero, b, b_scale, b_zero, y_scale, y_zero).
Status qlinear_matmul_kernel(KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Tensor a, centred(ctx, *ctx.input(0), ctx.input(2), -2));
  KILN_ASSIGN_OR_RETURN(Tensor b, centred(ctx, *ctx.input(3), ctx.input(5), -1));
  KILN_ASSIGN_OR_RETURN(Tensor acc, float_reference(ctx, "MatMul", a, b));
  return requantize(ctx, acc, *ctx.input(1), *ctx.input(4), *ctx.input(6), *ctx.input(7), -1);
}

// QLinearConv(x, x_scale, x_zero, w, w_scale, w_zero, y_scale, y_zero, B): B is int32, already in
// the x_scale * w_scale units of the accumulator.
Status qlinear_conv_kernel(KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Tensor x, centred(ctx, *ctx.input(0), ctx.input(2), 1));
  KILN_ASSIGN_OR_RETURN(Tensor w, centred(ctx, *ctx.input(3), ctx.input(5), 0));
  KILN_ASSIGN_OR_RETURN(Tensor acc, float_reference(ctx, "Conv", x, w));
  if (const Tensor* bias = ctx.input(8)) {
    const int64_t channels = acc.shape()[1], inner = acc.element_count() / (acc.shape()[0] * channels);
    for (int64_t i = 0; i < acc.element_count(); ++i) acc.data<double>()[i] += element_as_double(*bias, (i / inner) % channels);
  }
  return requantize(ctx, acc, *ctx.input(1), *ctx.input(4), *ctx.input(6), *ctx.input(7), 1);
}

}  // namespace

void register_quantization_ops(OpRegistry& r) {
  for (int v : {10, 13}) {
    r.add({"", "QuantizeLinear", v, with_required_inputs(2, quantize_infer), quantize_kernel});
    r.add({"", "DequantizeLinear", v, with_required_inputs(2, dequantize_infer), dequantize_kernel});
  }
  r.add({"", "DynamicQuantizeLinear", 11, with_required_inputs(1, dynamic_quantize_infer), dynamic_quantize_kernel});
  r.add({"", "MatMulInteger", 10,
         with_required_inputs(2, [](InferenceContext& c) { return infer_like(c, "MatMul", 0, 1, DType::kInt32); }),
         matmul_integer_kernel});
  r.add({"", "ConvInteger", 10,
         with_required_inputs(2, [](InferenceContext& c) { return infer_like(c, "Conv", 0, 1, DType::kInt32); }),
         conv_integer_kernel});
  r.add({"", "QLinearMatMul", 10,
         with_required_inputs(8, [](InferenceContext& c) { return infer_like(c, "MatMul", 0, 3, c.input_type(7).dtype); }),
         qlinear_matmul_kernel});
  r.add({"", "QLinearConv", 10,
         with_required_inputs(8, [](InferenceContext& c) { return infer_like(c, "Conv", 0, 3, c.input_type(7).dtype); }),
         qlinear_conv_kernel});
}

}  // namespace kiln::ops
