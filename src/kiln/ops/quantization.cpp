// Op family quantization: QuantizeLinear and DequantizeLinear (per tensor or per axis),
// DynamicQuantizeLinear, the integer products MatMulInteger and ConvInteger, and their requantizing
// forms QLinearMatMul and QLinearConv. Products are exact in int64 (ONNX lets 32-bit accumulators
// wrap, and the int32 outputs do); rounding is half to even, then saturation.
#include <algorithm>
#include <cmath>

#include "kiln/ops/conv.h"
#include "kiln/ops/data_movement.h"
#include "kiln/ops/family_support.h"
#include "kiln/ops/matmul.h"
#include "kiln/ops/op_families.h"
#include "kiln/ops/op_helpers.h"
#include "kiln/ops/quantization.h"

namespace kiln::ops {
namespace {

using QuantTypes = TypeList<int8_t, uint8_t>;
using IntegerDataTypes = TypeList<int8_t, uint8_t, int32_t>;
using ScaleTypes = TypeList<float>;

// ---- shared pieces ----


// An int8/uint8/int32 tensor's elements as int64 (zeros of `count` when the tensor is omitted).
std::vector<int64_t> integer_values(const Tensor* t, int64_t count = 1) {
  if (!t) return std::vector<int64_t>(static_cast<size_t>(count), 0);
  std::vector<int64_t> v(static_cast<size_t>(t->element_count()));
  dispatch<IntegerDataTypes>(t->dtype(), [&]<class T>() { std::copy_n(t->data<T>(), v.size(), v.begin()); });
  return v;
}


// Writes int64 values to an int32 output, wrapping like a 32-bit accumulator.
void store_int32(const std::vector<int64_t>& values, Tensor& y) {
  int32_t* out = y.data<int32_t>();
  for (size_t i = 0; i < values.size(); ++i) out[i] = static_cast<int32_t>(values[i]);
}

// ---- QuantizeLinear / DequantizeLinear ----

// QuantizeLinear's data and DequantizeLinear's output: float, and from opset 19 the 16-bit floats
// (with scales of that type). The quantized side: LinearQuantizedTypes (quantization.h).
using LinearFloatTypes = TypeList<float, Float16, BFloat16>;
using QuantizedOrInt32 = ConcatTypes<LinearQuantizedTypes, TypeList<int32_t>>;

template <bool kQuantize>
Status linear_quant_rule(InferenceContext& ctx) {
  KILN_RETURN_IF_ERROR(check_input_count(ctx, 2, 3));
  const int opset = ctx.opset();
  const DType data = ctx.input_type(0).dtype, scale = ctx.input_type(1).dtype;
  if (kQuantize) {
    const bool ok = data == DType::kFloat || data == DType::kInt32 || (opset >= 19 && (data == DType::kFloat16 || data == DType::kBFloat16));
    if (!ok && data != DType::kUndefined) return ctx.error("input 0 has unsupported element type " + std::string(dtype_name(data)));
  } else if (data != DType::kUndefined && data != DType::kInt32 && !is_linear_quantized(data, opset)) {
    return ctx.error("input 0 has unsupported element type " + std::string(dtype_name(data)));
  }
  const bool scale_ok = scale == DType::kFloat || (opset >= 19 && (scale == DType::kFloat16 || scale == DType::kBFloat16));
  if (!scale_ok && scale != DType::kUndefined) return ctx.error("scale has unsupported element type " + std::string(dtype_name(scale)));
  DType out = DType::kFloat;
  if (kQuantize) {
    out = opset >= 21 ? static_cast<DType>(ctx.node().attr_int("output_dtype", 0)) : DType::kUndefined;
    if (out == DType::kUndefined) out = DType::kUInt8;
  } else if (opset >= 19 && scale != DType::kUndefined) {
    out = scale;  // opset 19 on: the output has the scale's type
  }
  if (ctx.has_input(2)) {
    const DType zp = ctx.input_type(2).dtype;
    if (kQuantize) {
      if (zp != DType::kUndefined && !is_linear_quantized(zp, opset)) return ctx.error("zero point has unsupported element type " + std::string(dtype_name(zp)));
      if (opset >= 21 && ctx.node().has_attr("output_dtype") && zp != out)
        return ctx.error("output_dtype " + std::string(dtype_name(out)) + " differs from the zero point's type " + dtype_name(zp));
      if (zp != DType::kUndefined) out = zp;
    } else {
      KILN_RETURN_IF_ERROR(check_same_dtype(ctx, 0, 2));
    }
  }
  if (kQuantize && !is_linear_quantized(out, opset)) return ctx.error("output type " + std::string(dtype_name(out)) + " is not supported");
  const auto& x = ctx.input_type(0).shape;
  const auto& scale_shape = ctx.input_type(1).shape;
  if (x && x->is_static() && scale_shape && scale_shape->is_static())
    KILN_RETURN_IF_ERROR(linear_param_layout(ctx.node(), x->static_dims(), scale_shape->static_dims(), "scale").status());
  ctx.set_output_type(0, ir::TensorType{out, x});
  return Status::ok();
}

// The layouts of the scale (input 1) and optional zero point (input 2) over input 0.
Result<ParamLayout> linear_params(const KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  const Tensor* zp = ctx.input(2);
  KILN_ASSIGN_OR_RETURN(ParamLayout layout, linear_param_layout(ctx.node(), x.shape(), ctx.input(1)->shape(), "scale"));
  if (zp && zp->shape() != ctx.input(1)->shape())
    return ctx.error("zero point of shape " + shape_to_string(zp->shape()) + " differs from the scale's " +
                     shape_to_string(ctx.input(1)->shape()));
  return layout;
}

// A zero point's values as int64 (zeros of `count` when it is omitted).
std::vector<int64_t> zero_points(const Tensor* zp, int64_t count) {
  std::vector<int64_t> v(static_cast<size_t>(count), 0);
  if (zp)
    dispatch<QuantizedOrInt32>(zp->dtype(), [&]<class T>() {
      const T* z = zp->data<T>();
      for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<int64_t>(load(z[i]));
    });
  return v;
}

// y = saturate(round(x / scale) + zero_point); float data (16-bit floats widened) divides in
// float like the ONNX reference, int32 data in double.
Status quantize_linear_kernel(KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(ParamLayout layout, linear_params(ctx));
  const Tensor& x = *ctx.input(0);
  KILN_ASSIGN_OR_RETURN(std::vector<float> scale, read_floats(*ctx.input(1), "scale"));
  const std::vector<int64_t> zp = zero_points(ctx.input(2), static_cast<int64_t>(scale.size()));
  Tensor& y = *ctx.output(0);
  const bool saturate = ctx.node().attr_int("saturate", 1) != 0;
  dispatch<LinearQuantizedTypes>(y.dtype(), [&]<class Q>() {
    dispatch<ConcatTypes<LinearFloatTypes, TypeList<int32_t>>>(x.dtype(), [&]<class X>() {
      using Div = std::conditional_t<std::is_same_v<X, int32_t>, double, float>;
      const X* in = x.data<X>();
      Q* out = y.data<Q>();
      for (int64_t e = 0; e < x.element_count(); ++e) {
        const auto p = static_cast<size_t>(layout.at(e));
        out[e] = quantize_element<Q>(static_cast<Div>(load(in[e])) / static_cast<Div>(scale[p]), zp[p], saturate);
      }
    });
  });
  return Status::ok();
}

// y = (x - zero_point) * scale, in float like the ONNX reference, stored in the output's type.
Status dequantize_linear_kernel(KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(ParamLayout layout, linear_params(ctx));
  const Tensor& x = *ctx.input(0);
  KILN_ASSIGN_OR_RETURN(std::vector<float> scale, read_floats(*ctx.input(1), "scale"));
  const std::vector<int64_t> zp = zero_points(ctx.input(2), static_cast<int64_t>(scale.size()));
  Tensor& y = *ctx.output(0);
  dispatch<LinearFloatTypes>(y.dtype(), [&]<class F>() {
    dispatch<QuantizedOrInt32>(x.dtype(), [&]<class X>() {
      const X* in = x.data<X>();
      F* out = y.data<F>();
      for (int64_t e = 0; e < x.element_count(); ++e) {
        const auto p = static_cast<size_t>(layout.at(e));
        out[e] = store<F>((static_cast<float>(load(in[e])) - static_cast<float>(zp[p])) * scale[p]);
      }
    });
  });
  return Status::ok();
}

// ---- DynamicQuantizeLinear ----

Status dynamic_quantize_rule(InferenceContext& ctx) {
  KILN_RETURN_IF_ERROR(check_input_count(ctx, 1, 1));
  KILN_RETURN_IF_ERROR(check_input_dtype<ScaleTypes>(ctx, 0));
  ctx.set_output_type(0, ir::TensorType{DType::kUInt8, ctx.input_type(0).shape});
  ctx.set_output_type(1, ir::TensorType{DType::kFloat, ir::Shape{}});
  ctx.set_output_type(2, ir::TensorType{DType::kUInt8, ir::Shape{}});
  return Status::ok();
}

// The uint8 range [0, 255] stretched over [min(x, 0), max(x, 0)], all in float as the spec's
// function body computes it.
Status dynamic_quantize_kernel(KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  const float* in = x.data<float>();
  const int64_t n = x.element_count();
  float lo = 0, hi = 0;
  for (int64_t e = 0; e < n; ++e) {
    lo = std::min(lo, in[e]);
    hi = std::max(hi, in[e]);
  }
  const DynamicQuantization q = dynamic_quantization(lo, hi);
  uint8_t* out = ctx.output(0)->data<uint8_t>();
  for (int64_t e = 0; e < n; ++e) out[e] = q.quantize(in[e]);
  if (Tensor* s = ctx.output(1)) *s->data<float>() = q.scale;
  if (Tensor* z = ctx.output(2)) *z->data<uint8_t>() = q.zero_point;
  return Status::ok();
}

// ---- MatMulInteger / QLinearMatMul ----

// For each element of an operand of `shape`, the offset of its value in a per-tensor, per-row (A)
// or per-column (B) parameter of `param` shape. The parameter broadcasts numpy-style, except that
// A's 1-D parameter of M values applies per row, as the spec says.
Result<std::vector<int64_t>> operand_param_offsets(const ir::Node& node, const std::vector<int64_t>& shape,
                                                   std::vector<int64_t> param, bool per_row, const std::string& what) {
  const size_t r = shape.size();
  if (per_row && r >= 2 && param.size() == 1 && param[0] == shape[r - 2] && param[0] != 1) param.push_back(1);
  Result<std::vector<int64_t>> b = broadcast_static(param, shape);
  if (!b.is_ok() || b.value() != shape)
    return invalid_model(node.describe() + ": " + what + " of shape " + shape_to_string(param) +
                         " does not apply to an operand of shape " + shape_to_string(shape));
  return strided_offsets(shape, broadcast_strides(param, shape));
}

// An operand with its zero point (nullptr: 0) subtracted, as int64.
Result<std::vector<int64_t>> centered_operand(const ir::Node& node, const Tensor& x, const Tensor* zp, bool per_row,
                                              const std::string& what) {
  std::vector<int64_t> v = integer_values(&x);
  if (!zp) return v;
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> offsets, operand_param_offsets(node, x.shape(), zp->shape(), per_row, what));
  const std::vector<int64_t> z = integer_values(zp);
  for (size_t e = 0; e < v.size(); ++e) v[e] -= z[static_cast<size_t>(offsets[e])];
  return v;
}

// (A - a_zero_point) x (B - b_zero_point) with numpy matmul broadcasting, exact in int64.
struct IntegerMatMul {
  MatMulGeometry g;
  std::vector<int64_t> a, b;

  // Calls fn(y_matrix, a_matrix, b_matrix, c) with each M x N product matrix c.
  template <class F>
  void run(F&& fn) const {
    std::vector<int64_t> c(static_cast<size_t>(g.m * g.n));
    for_each_matrix_product(g, [&](int64_t i, int64_t ia, int64_t ib) {
      blocked_gemm(a.data() + ia * g.m * g.k, b.data() + ib * g.k * g.n, c.data(), g.m, g.k, g.n);
      fn(i, ia, ib, static_cast<const int64_t*>(c.data()));
    });
  }
};

Result<IntegerMatMul> integer_matmul(const KernelContext& ctx, size_t a, size_t a_zp, size_t b, size_t b_zp) {
  IntegerMatMul p;
  p.g = matmul_geometry(ctx.input(a)->shape(), ctx.input(b)->shape(), ctx.output(0)->shape());
  KILN_ASSIGN_OR_RETURN(p.a, centered_operand(ctx.node(), *ctx.input(a), ctx.input(a_zp), true, "a_zero_point"));
  KILN_ASSIGN_OR_RETURN(p.b, centered_operand(ctx.node(), *ctx.input(b), ctx.input(b_zp), false, "b_zero_point"));
  return p;
}

// Rule of the integer matmuls: quantized operands a and b with matching zero points; output `out`.
Status integer_matmul_rule(InferenceContext& ctx, size_t a, size_t a_zp, size_t b, size_t b_zp, DType out) {
  KILN_RETURN_IF_ERROR(check_input_dtype<QuantTypes>(ctx, a));
  KILN_RETURN_IF_ERROR(check_input_dtype<QuantTypes>(ctx, b));
  if (ctx.has_input(a_zp)) KILN_RETURN_IF_ERROR(check_same_dtype(ctx, a, a_zp));
  if (ctx.has_input(b_zp)) KILN_RETURN_IF_ERROR(check_same_dtype(ctx, b, b_zp));
  KILN_ASSIGN_OR_RETURN(std::optional<ir::Shape> shape, matmul_output_shape(ctx, a, b));
  ctx.set_output_type(0, ir::TensorType{out, std::move(shape)});
  return Status::ok();
}

Status matmul_integer_rule(InferenceContext& ctx) {
  KILN_RETURN_IF_ERROR(check_input_count(ctx, 2, 4));
  return integer_matmul_rule(ctx, 0, 2, 1, 3, DType::kInt32);
}

Status matmul_integer_kernel(KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(IntegerMatMul p, integer_matmul(ctx, 0, 2, 1, 3));
  int32_t* y = ctx.output(0)->data<int32_t>();
  const int64_t size = p.g.m * p.g.n;
  p.run([&](int64_t i, int64_t, int64_t, const int64_t* c) {
    for (int64_t e = 0; e < size; ++e) y[i * size + e] = static_cast<int32_t>(c[e]);
  });
  return Status::ok();
}

// Inputs: a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point.
Status qlinear_matmul_rule(InferenceContext& ctx) {
  KILN_RETURN_IF_ERROR(check_input_count(ctx, 8, 8));
  for (size_t s : {1, 4, 6}) KILN_RETURN_IF_ERROR(check_input_dtype<ScaleTypes>(ctx, s));
  KILN_RETURN_IF_ERROR(check_input_dtype<QuantTypes>(ctx, 7));
  return integer_matmul_rule(ctx, 0, 2, 3, 5, ctx.input_type(7).dtype);
}

// The scales of one operand, indexed like its elements (see operand_param_offsets).
struct OperandScales {
  std::vector<float> values;
  std::vector<int64_t> offsets;
  float at(int64_t element) const { return values[static_cast<size_t>(offsets[static_cast<size_t>(element)])]; }
};

Result<OperandScales> operand_scales(const KernelContext& ctx, size_t operand, size_t scale, bool per_row,
                                     const std::string& what) {
  OperandScales s;
  KILN_ASSIGN_OR_RETURN(s.values, read_floats(*ctx.input(scale), what));
  KILN_ASSIGN_OR_RETURN(s.offsets, operand_param_offsets(ctx.node(), ctx.input(operand)->shape(),
                                                         ctx.input(scale)->shape(), per_row, what));
  return s;
}

// Output y's single scale and zero point (inputs y_scale, y_zero_point).
Result<std::pair<float, int64_t>> output_params(const KernelContext& ctx, size_t scale, size_t zp) {
  if (ctx.input(scale)->element_count() != 1 || ctx.input(zp)->element_count() != 1)
    return ctx.error("y_scale and y_zero_point must hold one value each");
  KILN_ASSIGN_OR_RETURN(std::vector<float> s, read_floats(*ctx.input(scale), "y_scale"));
  return std::pair<float, int64_t>{s[0], integer_values(ctx.input(zp))[0]};
}

Status qlinear_matmul_kernel(KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(IntegerMatMul p, integer_matmul(ctx, 0, 2, 3, 5));
  KILN_ASSIGN_OR_RETURN(OperandScales a_scale, operand_scales(ctx, 0, 1, true, "a_scale"));
  KILN_ASSIGN_OR_RETURN(OperandScales b_scale, operand_scales(ctx, 3, 4, false, "b_scale"));
  KILN_ASSIGN_OR_RETURN(auto y_params, output_params(ctx, 6, 7));
  const float y_scale = y_params.first;  // not a structured binding: clang 14 cannot capture those
  const int64_t y_zp = y_params.second;
  const int64_t m = p.g.m, k = p.g.k, n = p.g.n;
  Tensor& y = *ctx.output(0);
  dispatch<QuantTypes>(y.dtype(), [&]<class Q>() {
    Q* out = y.data<Q>();
    p.run([&](int64_t i, int64_t ia, int64_t ib, const int64_t* c) {
      for (int64_t r = 0; r < m; ++r)
        for (int64_t col = 0; col < n; ++col) {
          // With K = 0 every product is 0 and the scales (which have no elements) do not matter.
          const float mult = k == 0 ? 0.0f
                                    : requant_multiplier(a_scale.at((ia * m + r) * k), b_scale.at(ib * k * n + col),
                                                         y_scale);
          out[(i * m + r) * n + col] = requantize<Q>(c[r * n + col], mult, y_zp);
        }
    });
  });
  return Status::ok();
}

// ---- ConvInteger / QLinearConv ----

// conv(X - x_zero_point, W - w_zero_point) + bias, exact in int64. x_zero_point holds one value;
// w_zero_point one value or one per output channel.
Result<std::vector<int64_t>> integer_conv(const KernelContext& ctx, size_t x_index, size_t x_zp, size_t w_index,
                                          size_t w_zp, const Tensor* bias) {
  const Tensor& x = *ctx.input(x_index);
  const Tensor& w = *ctx.input(w_index);
  const Tensor& y = *ctx.output(0);
  KILN_ASSIGN_OR_RETURN(ConvProblem p, conv_problem(ctx.node(), x.shape(), w.shape(), y.shape(), false));
  if (ctx.input(x_zp) && ctx.input(x_zp)->element_count() != 1) return ctx.error("x_zero_point must hold one value");
  std::vector<int64_t> xs = integer_values(&x), ws = integer_values(&w);
  const int64_t xz = integer_values(ctx.input(x_zp))[0];
  for (int64_t& v : xs) v -= xz;
  const int64_t w_zp_count = ctx.input(w_zp) ? ctx.input(w_zp)->element_count() : 1;
  KILN_ASSIGN_OR_RETURN(ParamLayout layout, axis_layout(ctx.node(), w.shape(), 0, w_zp_count, "w_zero_point"));
  const std::vector<int64_t> wz = integer_values(ctx.input(w_zp), w_zp_count);
  for (size_t e = 0; e < ws.size(); ++e) ws[e] -= wz[static_cast<size_t>(layout.at(static_cast<int64_t>(e)))];
  std::vector<int64_t> b = bias ? integer_values(bias) : std::vector<int64_t>();
  std::vector<int64_t> out(static_cast<size_t>(y.element_count()));
  conv_forward<int64_t>(p, xs.data(), ws.data(), bias ? b.data() : nullptr, out.data());
  return out;
}

// Inputs: x, w, x_zero_point, w_zero_point.
Status conv_integer_rule(InferenceContext& ctx) {
  KILN_RETURN_IF_ERROR(check_input_count(ctx, 2, 4));
  KILN_RETURN_IF_ERROR(check_input_dtype<QuantTypes>(ctx, 0));
  KILN_RETURN_IF_ERROR(check_input_dtype<QuantTypes>(ctx, 1));
  if (ctx.has_input(2)) KILN_RETURN_IF_ERROR(check_same_dtype(ctx, 0, 2));
  if (ctx.has_input(3)) KILN_RETURN_IF_ERROR(check_same_dtype(ctx, 1, 3));
  KILN_ASSIGN_OR_RETURN(std::optional<ir::Shape> shape, conv_output_shape(ctx, ConvInputs{0, 1, std::nullopt}, false));
  ctx.set_output_type(0, ir::TensorType{DType::kInt32, std::move(shape)});
  return Status::ok();
}

Status conv_integer_kernel(KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> acc, integer_conv(ctx, 0, 2, 1, 3, nullptr));
  store_int32(acc, *ctx.output(0));
  return Status::ok();
}

// Inputs: x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, B.
Status qlinear_conv_rule(InferenceContext& ctx) {
  KILN_RETURN_IF_ERROR(check_input_count(ctx, 8, 9));
  KILN_RETURN_IF_ERROR(check_input_dtype<QuantTypes>(ctx, 0));
  KILN_RETURN_IF_ERROR(check_input_dtype<QuantTypes>(ctx, 3));
  KILN_RETURN_IF_ERROR(check_input_dtype<QuantTypes>(ctx, 7));
  KILN_RETURN_IF_ERROR(check_same_dtype(ctx, 0, 2));
  KILN_RETURN_IF_ERROR(check_same_dtype(ctx, 3, 5));
  for (size_t s : {1, 4, 6}) KILN_RETURN_IF_ERROR(check_input_dtype<ScaleTypes>(ctx, s));
  if (ctx.has_input(8)) KILN_RETURN_IF_ERROR(check_input_dtype<TypeList<int32_t>>(ctx, 8));
  KILN_ASSIGN_OR_RETURN(std::optional<ir::Shape> shape, conv_output_shape(ctx, ConvInputs{0, 3, 8}, false));
  ctx.set_output_type(0, ir::TensorType{ctx.input_type(7).dtype, std::move(shape)});
  return Status::ok();
}

Status qlinear_conv_kernel(KernelContext& ctx) {
  const Tensor* bias = ctx.input(8);
  const Tensor& y = *ctx.output(0);
  const int64_t channels = y.shape()[1];
  if (bias && bias->element_count() != channels) return ctx.error("bias length does not match output channels");
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> acc, integer_conv(ctx, 0, 2, 3, 5, bias));
  KILN_ASSIGN_OR_RETURN(std::vector<float> x_scale, read_floats(*ctx.input(1), "x_scale"));
  KILN_ASSIGN_OR_RETURN(std::vector<float> w_scale, read_floats(*ctx.input(4), "w_scale"));
  if (x_scale.size() != 1) return ctx.error("x_scale must hold one value");
  KILN_ASSIGN_OR_RETURN(ParamLayout w_layout, axis_layout(ctx.node(), ctx.input(3)->shape(), 0,
                                                          static_cast<int64_t>(w_scale.size()), "w_scale"));
  KILN_ASSIGN_OR_RETURN(auto y_params, output_params(ctx, 6, 7));
  const float y_scale = y_params.first;  // not a structured binding: clang 14 cannot capture those
  const int64_t y_zp = y_params.second;
  // Output element e is in channel (e / positions) % channels: the same layout as w_scale on Y's axis 1.
  const ParamLayout y_layout{w_layout.count, dims_product(y.shape(), 2, y.shape().size())};
  dispatch<QuantTypes>(y.dtype(), [&]<class Q>() {
    Q* out = ctx.output(0)->data<Q>();
    for (size_t e = 0; e < acc.size(); ++e) {
      const float mult = requant_multiplier(x_scale[0], w_scale[static_cast<size_t>(y_layout.at(static_cast<int64_t>(e)))], y_scale);
      out[e] = requantize<Q>(acc[e], mult, y_zp);
    }
  });
  return Status::ok();
}

}  // namespace

Result<ParamLayout> axis_layout(const ir::Node& node, const std::vector<int64_t>& data, int64_t axis, int64_t count,
                                const std::string& what) {
  if (count == 1) return ParamLayout{};
  if (axis < 0 || axis >= static_cast<int64_t>(data.size()) || data[static_cast<size_t>(axis)] != count)
    return invalid_model(node.describe() + ": " + what + " has " + std::to_string(count) +
                         " values; expected 1 or one per index of axis " + std::to_string(axis) + " of " +
                         shape_to_string(data));
  return ParamLayout{count, dims_product(data, static_cast<size_t>(axis) + 1, data.size())};
}

// Per-axis parameters need opset 13, blocks opset 21; earlier versions take one value.
Result<ParamLayout> linear_param_layout(const ir::Node& node, const std::vector<int64_t>& data,
                                        const std::vector<int64_t>& param, const std::string& what) {
  const int64_t count = shape_element_count(param);
  const int64_t block = node.opset_version >= 21 ? node.attr_int("block_size", 0) : 0;
  if (block < 0) return invalid_model(node.describe() + ": block_size must not be negative");
  if (count == 1 && block == 0) return ParamLayout{};
  if (node.opset_version < 13) return invalid_model(node.describe() + ": " + what + " must hold one value before opset 13");
  KILN_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(node.attr_int("axis", 1), static_cast<int64_t>(data.size())));
  if (block == 0) {
    if (param.size() > 1) return invalid_model(node.describe() + ": " + what + " of shape " + shape_to_string(param) + " must be 1-D");
    return axis_layout(node, data, axis, count, what);
  }
  std::vector<int64_t> expected = data;
  const int64_t length = data[static_cast<size_t>(axis)];
  expected[static_cast<size_t>(axis)] = (length + block - 1) / block;
  if (param != expected)
    return invalid_model(node.describe() + ": " + what + " of shape " + shape_to_string(param) + " for blocks of " +
                         std::to_string(block) + " along axis " + std::to_string(axis) + " of " + shape_to_string(data) +
                         " must have shape " + shape_to_string(expected));
  return ParamLayout{count, dims_product(data, static_cast<size_t>(axis) + 1, data.size()), length, block};
}

void register_quantization_ops(OpRegistry& r) {
  for (int v : {10, 13, 19, 21}) {
    r.add({"", "QuantizeLinear", v, linear_quant_rule<true>, quantize_linear_kernel});
    r.add({"", "DequantizeLinear", v, linear_quant_rule<false>, dequantize_linear_kernel});
  }
  r.add({"", "DynamicQuantizeLinear", 11, dynamic_quantize_rule, dynamic_quantize_kernel});
  r.add({"", "MatMulInteger", 10, matmul_integer_rule, matmul_integer_kernel});
  for (int v : {10, 21}) r.add({"", "QLinearMatMul", v, qlinear_matmul_rule, qlinear_matmul_kernel});  // 21 adds float8 types
  r.add({"", "ConvInteger", 10, conv_integer_rule, conv_integer_kernel});
  r.add({"", "QLinearConv", 10, qlinear_conv_rule, qlinear_conv_kernel});
}

}  // namespace kiln::ops
