// Element-wise unary ops (activations, math functions, predicates, Clip): one table of
// per-element functions over compile-time dtype lists, one shape rule, one kernel loop.
#include <algorithm>
#include <cmath>
#include <limits>

#include "kiln/ops/clip.h"
#include "kiln/ops/compare_select.h"
#include "kiln/ops/elementwise_functions.h"
#include "kiln/ops/elementwise_math.h"
#include "kiln/ops/family_support.h"
#include "kiln/ops/op_families.h"
#include "kiln/ops/op_helpers.h"

namespace kiln::ops {
namespace {

template <class Types, class Out>
Status unary_rule(InferenceContext& ctx) {
  KILN_RETURN_IF_ERROR(check_input_count(ctx, 1, 1));
  KILN_RETURN_IF_ERROR(check_input_dtype<Types>(ctx, 0));
  const ir::TensorType& x = ctx.input_type(0);
  const DType out = std::is_same_v<Out, SameType> ? x.dtype : dtype_of<Out>();
  ctx.set_output_type(0, ir::TensorType{out, x.shape});
  return Status::ok();
}

// `make_fn(node)` returns the per-element function (a generic lambda over the compute type), so
// attributes are read once per run, not once per element. The op's ElementFunction instantiates
// the loop for each dtype of Types; the reference kernel runs it, in chunks on OpenMP threads when
// the tensor is large.
template <class Types, class Out = SameType, class MakeFn>
void add_unary(OpRegistry& r, const char* op, std::initializer_list<int> versions, MakeFn make_fn) {
  ElementFunction function = [make_fn](const ir::Node& node, DType dtype) -> std::optional<ElementRange> {
    std::optional<ElementRange> range;
    dispatch<Types>(dtype, [&]<class T>() {
      range = [fn = make_fn(node)](const Tensor& x, Tensor& y, int64_t begin, int64_t end) {
        using O = OutputOf<Out, T>;
        const T* in = x.data<T>();
        O* out = y.data<O>();
        for (int64_t i = begin; i < end; ++i) out[i] = store<O>(fn(load(in[i])));
      };
    });
    return range;
  };
  Kernel kernel = [function](KernelContext& ctx) -> Status {
    const Tensor& x = *ctx.input(0);
    const std::optional<ElementRange> range = function(ctx.node(), x.dtype());
    if (!range) return ctx.error(std::string("unsupported element type ") + dtype_name(x.dtype()));
    constexpr int64_t kChunk = int64_t{1} << 14;
    const int64_t n = x.element_count(), chunks = (n + kChunk - 1) / kChunk;
#pragma omp parallel for if (n > (1 << 16))
    for (int64_t c = 0; c < chunks; ++c) (*range)(x, *ctx.output(0), c * kChunk, std::min(n, (c + 1) * kChunk));
    return Status::ok();
  };
  for (int v : versions) {
    OpDef def{"", op, v, unary_rule<Types, Out>, kernel};
    def.element_function = function;
    r.add(std::move(def));
  }
}

// An op computing the element-wise table's function `f` (elementwise_functions.h) for every type
// of Types: `math` calls f's elementwise_math.h template, with the node's alpha and beta (the
// table's defaults when absent), so the op and every fused or generated form of it compute one
// definition.
template <class Types, class Math>
void add_table_op(OpRegistry& r, Elementwise f, std::initializer_list<int> versions, Math math) {
  const ElementwiseFunction& entry = elementwise_function(f);
  add_unary<Types>(r, entry.name.data(), versions, [&entry, math](const ir::Node& n) {
    const float alpha = n.attr_float("alpha", entry.default_alpha), beta = n.attr_float("beta", entry.default_beta);
    return [alpha, beta, math](auto x) {
      using S = decltype(x);
      return math(x, S(0), static_cast<S>(alpha), static_cast<S>(beta));
    };
  });
}

void register_table_ops(OpRegistry& r) {
  namespace m = elementwise_math;
  using E = Elementwise;
  add_table_op<SignedTypes>(r, E::kRelu, {1, 6, 13, 14}, [](auto... v) { return m::relu(v...); });
  add_table_op<FloatTypes>(r, E::kLeakyRelu, {1, 6, 16}, [](auto... v) { return m::leaky_relu(v...); });
  add_table_op<FloatTypes>(r, E::kSigmoid, {1, 6, 13}, [](auto... v) { return m::sigmoid(v...); });
  add_table_op<FloatTypes>(r, E::kHardSigmoid, {1, 6}, [](auto... v) { return m::hard_sigmoid(v...); });
  add_table_op<FloatTypes>(r, E::kHardSwish, {14}, [](auto... v) { return m::hard_swish(v...); });
  add_table_op<FloatTypes>(r, E::kSoftplus, {1}, [](auto... v) { return m::softplus(v...); });
  add_table_op<FloatTypes>(r, E::kMish, {18}, [](auto... v) { return m::mish(v...); });
  add_table_op<FloatTypes>(r, E::kSoftsign, {1}, [](auto... v) { return m::softsign(v...); });
  add_table_op<FloatTypes>(r, E::kElu, {1, 6}, [](auto... v) { return m::elu(v...); });
  add_table_op<FloatTypes>(r, E::kThresholdedRelu, {10}, [](auto... v) { return m::thresholded_relu(v...); });
  add_table_op<FloatTypes>(r, E::kTanh, {1, 6, 13}, [](auto... v) { return m::tanh_(v...); });
  add_table_op<FloatTypes>(r, E::kSqrt, {1, 6, 13}, [](auto... v) { return m::sqrt_(v...); });
  add_table_op<SignedTypes>(r, E::kNeg, {1, 6, 13}, [](auto... v) { return m::neg(v...); });
  add_table_op<FloatTypes>(r, E::kExp, {1, 6, 13}, [](auto... v) { return m::exp_(v...); });
  add_table_op<FloatTypes>(r, E::kLog, {1, 6, 13}, [](auto... v) { return m::log_(v...); });
  add_table_op<NumericTypes>(r, E::kAbs, {1, 6, 13}, [](auto... v) { return m::abs_(v...); });
}

// The activations that are not functions of the table (no fused or chained form holds them).
void register_activations(OpRegistry& r) {
  add_unary<FloatTypes>(r, "Selu", {1, 6}, [](const ir::Node& n) {
    const double alpha = n.attr_float("alpha", 1.67326319217681884765625f);
    const double gamma = n.attr_float("gamma", 1.05070102214813232421875f);
    return [alpha, gamma](auto x) { return x <= 0 ? gamma * alpha * std::expm1(double(x)) : gamma * x; };
  });
  add_unary<FloatTypes>(r, "Celu", {12}, [](const ir::Node& n) {
    const double alpha = n.attr_float("alpha", 1.0f);
    return [alpha](auto x) { return x > 0 ? double(x) : alpha * std::expm1(x / alpha); };
  });
  add_unary<NumericTypes>(r, "Shrink", {9}, [](const ir::Node& n) {
    const double bias = n.attr_float("bias", 0.0f), lambd = n.attr_float("lambd", 0.5f);
    return [bias, lambd](auto x) {
      const double v = static_cast<double>(x);
      return v < -lambd ? v + bias : v > lambd ? v - bias : 0.0;
    };
  });
}

void register_math(OpRegistry& r) {
  add_unary<NumericTypes>(r, "Erf", {9, 13}, pure([](auto x) { return std::erf(x); }));
  add_unary<FloatTypes>(r, "Reciprocal", {1, 6, 13}, pure([](auto x) { return 1 / x; }));
  add_unary<NumericTypes>(r, "Sign", {9, 13}, pure([](auto x) {
    if constexpr (std::is_unsigned_v<decltype(x)>) return x > 0 ? 1 : 0;
    else return x > 0 ? 1 : (x < 0 ? -1 : 0);
  }));
  add_unary<FloatTypes>(r, "Floor", {1, 6, 13}, pure([](auto x) { return std::floor(x); }));
  add_unary<FloatTypes>(r, "Ceil", {1, 6, 13}, pure([](auto x) { return std::ceil(x); }));
  // nearbyint in the default rounding mode rounds halves to even, as numpy.round does.
  add_unary<FloatTypes>(r, "Round", {11}, pure([](auto x) { return std::nearbyint(x); }));
  add_unary<FloatTypes>(r, "Sin", {7}, pure([](auto x) { return std::sin(x); }));
  add_unary<FloatTypes>(r, "Cos", {7}, pure([](auto x) { return std::cos(x); }));
  add_unary<FloatTypes>(r, "Tan", {7}, pure([](auto x) { return std::tan(x); }));
  add_unary<FloatTypes>(r, "Asin", {7}, pure([](auto x) { return std::asin(x); }));
  add_unary<FloatTypes>(r, "Acos", {7}, pure([](auto x) { return std::acos(x); }));
  add_unary<FloatTypes>(r, "Atan", {7}, pure([](auto x) { return std::atan(x); }));
  add_unary<FloatTypes>(r, "Sinh", {9}, pure([](auto x) { return std::sinh(x); }));
  add_unary<FloatTypes>(r, "Cosh", {9}, pure([](auto x) { return std::cosh(x); }));
  add_unary<FloatTypes>(r, "Asinh", {9}, pure([](auto x) { return std::asinh(x); }));
  add_unary<FloatTypes>(r, "Acosh", {9}, pure([](auto x) { return std::acosh(x); }));
  add_unary<FloatTypes>(r, "Atanh", {9}, pure([](auto x) { return std::atanh(x); }));
}

void register_predicates_and_bits(OpRegistry& r) {
  add_unary<FloatTypes, bool>(r, "IsNaN", {9, 13, 20}, pure([](auto x) { return std::isnan(x); }));
  add_unary<FloatTypes, bool>(r, "IsInf", {10, 20}, [](const ir::Node& n) {
    const bool negative = n.attr_int("detect_negative", 1) != 0, positive = n.attr_int("detect_positive", 1) != 0;
    return [negative, positive](auto x) { return std::isinf(x) && (x > 0 ? positive : negative); };
  });
  add_unary<BoolTypes>(r, "Not", {1}, pure(NotFn{}));
  add_unary<IntTypes>(r, "BitwiseNot", {18}, pure(BitwiseNotFn{}));
}

Status clip_rule(InferenceContext& ctx) {
  KILN_RETURN_IF_ERROR(check_input_count(ctx, 1, ctx.opset() < 11 ? 1 : 3));
  KILN_RETURN_IF_ERROR(check_input_dtype<NumericTypes>(ctx, 0));
  for (size_t i = 1; i < ctx.input_count(); ++i) {
    if (!ctx.has_input(i)) continue;
    KILN_RETURN_IF_ERROR(check_same_dtype(ctx, 0, i));
    const auto& shape = ctx.input_type(i).shape;
    if (shape && shape->is_static() && shape_element_count(shape->static_dims()) != 1)
      return ctx.error("bound input " + std::to_string(i) + " must be a scalar, got shape " + shape->to_string());
  }
  ctx.set_output_type(0, ctx.input_type(0));
  return Status::ok();
}

Status clip_kernel(KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  Tensor& y = *ctx.output(0);
  Status status;
  const bool ok = dispatch<NumericTypes>(x.dtype(), [&]<class T>() {
    auto bounds = clip_bounds<T>(ctx);
    if (!bounds.is_ok()) {
      status = bounds.status();
      return;
    }
    const auto [lo, hi] = bounds.value();
    const T* in = x.data<T>();
    T* out = y.data<T>();
    for (int64_t i = 0; i < x.element_count(); ++i) out[i] = store<T>(clip_value(load(in[i]), lo, hi));
  });
  if (!ok) return ctx.error(std::string("unsupported element type ") + dtype_name(x.dtype()));
  return status;
}

}  // namespace

void register_elementwise_unary_ops(OpRegistry& r) {
  register_table_ops(r);
  register_activations(r);
  register_math(r);
  register_predicates_and_bits(r);
  for (int v : {1, 6, 11, 12, 13}) r.add(OpDef{"", "Clip", v, clip_rule, clip_kernel});
}

}  // namespace kiln::ops
