// Element-wise ops of two or more inputs with numpy broadcasting: arithmetic, Pow, Mod,
// comparisons, logic and bit ops, PRelu, Where and the variadic Max/Min/Sum/Mean. Before opset 7
// the binary ops broadcast B into A only with `broadcast`=1 (aligned at `axis`).
#include <cmath>
#include <limits>

#include "kiln/ops/arithmetic.h"
#include "kiln/ops/compare_select.h"
#include "kiln/ops/power.h"
#include "kiln/ops/elementwise_broadcast.h"
#include "kiln/ops/family_support.h"
#include "kiln/ops/op_families.h"
#include "kiln/ops/op_helpers.h"

namespace kiln::ops {
namespace {

// B's shape placed inside A's rank with B's dims starting at `axis` (1s elsewhere); a one-element
// B becomes a scalar. Used by the opset < 7 `broadcast` forms and by PRelu before opset 7.
Result<ir::Shape> align_at_axis(const ir::Shape& a, const ir::Shape& b, int64_t axis) {
  if (b.is_static() && shape_element_count(b.static_dims()) == 1) return ir::Shape{};
  const int64_t ra = static_cast<int64_t>(a.rank()), rb = static_cast<int64_t>(b.rank());
  if (axis < 0 || axis + rb > ra)
    return invalid_model("cannot align shape " + b.to_string() + " with " + a.to_string() + " at axis " +
                         std::to_string(axis));
  std::vector<ir::Dim> dims(static_cast<size_t>(ra), ir::Dim(1));
  for (int64_t i = 0; i < rb; ++i) dims[static_cast<size_t>(axis + i)] = b[static_cast<size_t>(i)];
  return ir::Shape(std::move(dims));
}

// The shape operand B takes part in the broadcast with: itself from opset 7 on; before that
// aligned at `axis` when `broadcast`=1, else it must equal A's shape.
Result<ir::Shape> effective_b_shape(const ir::Node& node, const ir::Shape& a, const ir::Shape& b) {
  if (node.opset_version >= 7) return b;
  if (node.attr_int("broadcast", 0) == 0) {
    if (a.is_static() && b.is_static() && !(a == b))
      return invalid_model("shapes " + a.to_string() + " and " + b.to_string() +
                           " differ and attribute broadcast is 0 (opset < 7)");
    return b;
  }
  const int64_t axis = node.attr_int("axis", static_cast<int64_t>(a.rank()) - static_cast<int64_t>(b.rank()));
  return align_at_axis(a, b, axis < 0 ? axis + static_cast<int64_t>(a.rank()) : axis);
}

// Output shape of a binary op; legacy forms broadcast unidirectionally into A.
Result<ir::Shape> binary_output_shape(const ir::Node& node, const ir::Shape& a, const ir::Shape& b) {
  KILN_ASSIGN_OR_RETURN(ir::Shape b_eff, effective_b_shape(node, a, b));
  KILN_ASSIGN_OR_RETURN(ir::Shape out, broadcast_shapes(a, b_eff));
  if (node.opset_version < 7 && out.rank() != a.rank())
    return invalid_model("shape " + b.to_string() + " does not broadcast into " + a.to_string());
  return out;
}

// Sets the output type of a binary op: element type `dtype`, the broadcast shape of the inputs.
Status set_binary_output(InferenceContext& ctx, DType dtype) {
  const ir::TensorType& a = ctx.input_type(0);
  const ir::TensorType& b = ctx.input_type(1);
  ir::TensorType out{dtype, std::nullopt};
  if (a.shape && b.shape) {
    auto shape = binary_output_shape(ctx.node(), *a.shape, *b.shape);
    if (!shape.is_ok()) return ctx.error(shape.status().message());
    out.shape = shape.value();
  }
  ctx.set_output_type(0, std::move(out));
  return Status::ok();
}

template <class Types, class Out>
Status binary_rule(InferenceContext& ctx) {
  KILN_RETURN_IF_ERROR(check_input_count(ctx, 2, 2));
  KILN_RETURN_IF_ERROR(check_input_dtype<Types>(ctx, 0));
  KILN_RETURN_IF_ERROR(check_same_dtype(ctx, 0, 1));
  return set_binary_output(ctx, std::is_same_v<Out, SameType> ? ctx.input_type(0).dtype : dtype_of<Out>());
}

// Runs out[i] = fn(a[.], b[.]) over the broadcast; A, B, O are storage types.
template <class A, class B, class O, class F>
void binary_loop(const Tensor& a, const Tensor& b, const std::vector<int64_t>& b_shape, Tensor& out, F& fn) {
  const A* pa = a.data<A>();
  const B* pb = b.data<B>();
  O* po = out.data<O>();
  for_each_broadcast<2>(out.shape(), {a.shape(), b_shape},
                        [&](int64_t i, const std::array<int64_t, 2>& off) { po[i] = store<O>(fn(load(pa[off[0]]), load(pb[off[1]]))); });
}

Result<std::vector<int64_t>> kernel_b_shape(const KernelContext& ctx) {
  auto shape = effective_b_shape(ctx.node(), ir::Shape::from_static(ctx.input(0)->shape()),
                                 ir::Shape::from_static(ctx.input(1)->shape()));
  if (!shape.is_ok()) return ctx.error(shape.status().message());
  return shape.value().static_dims();
}

enum class Divisor { kAny, kNonZeroInteger };

// `make_fn(node)` returns the per-element function over compute types (attributes read once).
// `rule` replaces the plain binary rule for ops with attributes to validate.
template <class Types, class Out = SameType, class MakeFn>
void add_binary(OpRegistry& r, const char* op, std::initializer_list<int> versions, MakeFn make_fn,
                Divisor divisor = Divisor::kAny, ShapeRule rule = binary_rule<Types, Out>) {
  Kernel kernel = [make_fn, divisor](KernelContext& ctx) -> Status {
    KILN_ASSIGN_OR_RETURN(std::vector<int64_t> b_shape, kernel_b_shape(ctx));
    const Tensor& a = *ctx.input(0);
    const Tensor& b = *ctx.input(1);
    auto fn = make_fn(ctx.node());
    bool zero_divisor = false;
    const bool ok = dispatch<Types>(a.dtype(), [&]<class T>() {
      if (divisor == Divisor::kNonZeroInteger && has_integer_zero<T>(b)) {
        zero_divisor = true;
        return;
      }
      binary_loop<T, T, OutputOf<Out, T>>(a, b, b_shape, *ctx.output(0), fn);
    });
    if (!ok) return ctx.error(std::string("unsupported element type ") + dtype_name(a.dtype()));
    if (zero_divisor) return ctx.error("integer division by zero");
    return Status::ok();
  };
  for (int v : versions) r.add(OpDef{"", op, v, rule, kernel});
}

using ArithmeticTypes = NumericTypes;
using ComparableTypes = NumericTypes;

void register_arithmetic(OpRegistry& r) {
  add_binary<ArithmeticTypes>(r, "Add", {1, 6, 7, 13, 14}, pure(SumFn{}));
  add_binary<ArithmeticTypes>(r, "Sub", {1, 6, 7, 13, 14}, pure(DifferenceFn{}));
  add_binary<ArithmeticTypes>(r, "Mul", {1, 6, 7, 13, 14}, pure(ProductFn{}));
  add_binary<ArithmeticTypes>(r, "Div", {1, 6, 7, 13, 14}, pure(QuotientFn{}),
                              Divisor::kNonZeroInteger);
  add_binary<ArithmeticTypes>(r, "Mod", {10, 13}, [](const ir::Node& n) {
    const bool c_style = n.attr_int("fmod", 0) != 0;
    return [c_style](auto a, auto b) { return modulo(a, b, c_style); };
  }, Divisor::kNonZeroInteger, [](InferenceContext& ctx) -> Status {
    if (ctx.node().attr_int("fmod", 0) == 0 && is_float_dtype(ctx.input_type(0).dtype))
      return ctx.error("Mod of floating-point inputs needs fmod=1 (the spec leaves fmod=0 to integers)");
    return binary_rule<ArithmeticTypes, SameType>(ctx);
  });
}

void register_comparisons_and_logic(OpRegistry& r) {
  add_binary<NumericOrBoolTypes, bool>(r, "Equal", {1, 7, 11, 13, 19}, pure(EqualFn{}));  // 19 adds strings: refused by type
  add_binary<ComparableTypes, bool>(r, "Less", {1, 7, 9, 13}, pure(LessFn{}));
  add_binary<ComparableTypes, bool>(r, "Greater", {1, 7, 9, 13}, pure(GreaterFn{}));
  add_binary<ComparableTypes, bool>(r, "LessOrEqual", {12, 16}, pure(LessOrEqualFn{}));
  add_binary<ComparableTypes, bool>(r, "GreaterOrEqual", {12, 16}, pure(GreaterOrEqualFn{}));
  add_binary<BoolTypes>(r, "And", {1, 7}, pure(AndFn{}));
  add_binary<BoolTypes>(r, "Or", {1, 7}, pure(OrFn{}));
  add_binary<BoolTypes>(r, "Xor", {1, 7}, pure(XorFn{}));
  add_binary<IntTypes>(r, "BitwiseAnd", {18}, pure(BitwiseAndFn{}));
  add_binary<IntTypes>(r, "BitwiseOr", {18}, pure(BitwiseOrFn{}));
  add_binary<IntTypes>(r, "BitwiseXor", {18}, pure(BitwiseXorFn{}));
  add_binary<UnsignedIntTypes>(r, "BitShift", {11}, [](const ir::Node& n) {
    const bool left = n.attr_string("direction") == "LEFT";
    return [left](auto x, auto by) { return shift(x, by, left); };
  }, Divisor::kAny, [](InferenceContext& ctx) -> Status {
    const std::string direction = ctx.node().attr_string("direction");
    if (direction != "LEFT" && direction != "RIGHT")
      return ctx.error("attribute direction must be LEFT or RIGHT, got '" + direction + "'");
    return binary_rule<UnsignedIntTypes, SameType>(ctx);
  });
}

Status pow_rule(InferenceContext& ctx) {
  KILN_RETURN_IF_ERROR(check_input_count(ctx, 2, 2));
  KILN_RETURN_IF_ERROR(check_input_dtype<PowBaseTypes>(ctx, 0));
  KILN_RETURN_IF_ERROR(check_input_dtype<NumericTypes>(ctx, 1));
  if (ctx.opset() < 12) KILN_RETURN_IF_ERROR(check_same_dtype(ctx, 0, 1));
  return set_binary_output(ctx, ctx.input_type(0).dtype);
}

Status pow_kernel(KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> b_shape, kernel_b_shape(ctx));
  const Tensor& x = *ctx.input(0);
  const Tensor& y = *ctx.input(1);
  bool ok = false;
  dispatch<PowBaseTypes>(x.dtype(), [&]<class X>() {
    ok = dispatch<NumericTypes>(y.dtype(), [&]<class Y>() {
      auto fn = [](Compute<X> a, Compute<Y> b) { return power<X, Y>(a, b); };
      binary_loop<X, Y, X>(x, y, b_shape, *ctx.output(0), fn);
    });
  });
  if (!ok) return ctx.error(std::string("unsupported element types ") + dtype_name(x.dtype()) + " and " + dtype_name(y.dtype()));
  return Status::ok();
}

// PRelu's slope broadcasts into X (unidirectionally); before opset 7 a 1-D slope is per channel (axis 1).
Result<ir::Shape> slope_shape(const ir::Node& node, const ir::Shape& x, const ir::Shape& slope) {
  if (node.opset_version < 7 && slope.rank() == 1 && x.rank() >= 2) return align_at_axis(x, slope, 1);
  return slope;
}

Status prelu_rule(InferenceContext& ctx) {
  KILN_RETURN_IF_ERROR(check_input_count(ctx, 2, 2));
  KILN_RETURN_IF_ERROR(check_input_dtype<NumericTypes>(ctx, 0));
  KILN_RETURN_IF_ERROR(check_same_dtype(ctx, 0, 1));
  const ir::TensorType& x = ctx.input_type(0);
  const ir::TensorType& slope = ctx.input_type(1);
  if (x.shape && slope.shape) {
    auto aligned = slope_shape(ctx.node(), *x.shape, *slope.shape);
    if (!aligned.is_ok()) return ctx.error(aligned.status().message());
    auto out = broadcast_shapes(*x.shape, aligned.value());
    if (!out.is_ok() || out.value().rank() != x.shape->rank())
      return ctx.error("slope shape " + slope.shape->to_string() + " does not broadcast to " + x.shape->to_string());
  }
  ctx.set_output_type(0, x);
  return Status::ok();
}

Status prelu_kernel(KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  const Tensor& slope = *ctx.input(1);
  auto aligned = slope_shape(ctx.node(), ir::Shape::from_static(x.shape()), ir::Shape::from_static(slope.shape()));
  if (!aligned.is_ok()) return ctx.error(aligned.status().message());
  PReluFn fn;
  const bool ok = dispatch<NumericTypes>(x.dtype(), [&]<class T>() {
    binary_loop<T, T, T>(x, slope, aligned.value().static_dims(), *ctx.output(0), fn);
  });
  if (!ok) return ctx.error(std::string("unsupported element type ") + dtype_name(x.dtype()));
  return Status::ok();
}

Status where_rule(InferenceContext& ctx) {
  KILN_RETURN_IF_ERROR(check_input_count(ctx, 3, 3));
  KILN_RETURN_IF_ERROR(check_input_dtype<BoolTypes>(ctx, 0));
  KILN_RETURN_IF_ERROR(check_input_dtype<AllTypes>(ctx, 1));
  KILN_RETURN_IF_ERROR(check_same_dtype(ctx, 1, 2));
  ir::TensorType out{ctx.input_type(1).dtype, std::nullopt};
  if (ctx.input_type(0).shape && ctx.input_type(1).shape && ctx.input_type(2).shape) {
    auto xy = broadcast_shapes(*ctx.input_type(1).shape, *ctx.input_type(2).shape);
    if (!xy.is_ok()) return ctx.error(xy.status().message());
    auto all = broadcast_shapes(*ctx.input_type(0).shape, xy.value());
    if (!all.is_ok()) return ctx.error(all.status().message());
    out.shape = all.value();
  }
  ctx.set_output_type(0, std::move(out));
  return Status::ok();
}

Status where_kernel(KernelContext& ctx) {
  const Tensor& cond = *ctx.input(0);
  const Tensor& x = *ctx.input(1);
  const Tensor& y = *ctx.input(2);
  Tensor& out = *ctx.output(0);
  const bool ok = dispatch<AllTypes>(x.dtype(), [&]<class T>() {
    const bool* pc = cond.data<bool>();
    const T* px = x.data<T>();
    const T* py = y.data<T>();
    T* po = out.data<T>();
    for_each_broadcast<3>(out.shape(), {cond.shape(), x.shape(), y.shape()},
                          [&](int64_t i, const std::array<int64_t, 3>& off) { po[i] = pc[off[0]] ? px[off[1]] : py[off[2]]; });
  });
  if (!ok) return ctx.error(std::string("unsupported element type ") + dtype_name(x.dtype()));
  return Status::ok();
}

// Max, Min, Sum, Mean: any number of inputs, all broadcast together (multidirectional).
template <class Types>
Status variadic_rule(InferenceContext& ctx) {
  KILN_RETURN_IF_ERROR(check_input_count(ctx, 1, std::numeric_limits<size_t>::max()));
  std::optional<ir::Shape> shape = ctx.input_type(0).shape;
  for (size_t i = 0; i < ctx.input_count(); ++i) {
    if (!ctx.has_input(i)) return ctx.error("input " + std::to_string(i) + " is missing");
    KILN_RETURN_IF_ERROR(check_input_dtype<Types>(ctx, i));
    KILN_RETURN_IF_ERROR(check_same_dtype(ctx, 0, i));
    if (!shape || !ctx.input_type(i).shape) {
      shape.reset();
      continue;
    }
    auto next = broadcast_shapes(*shape, *ctx.input_type(i).shape);
    if (!next.is_ok()) return ctx.error(next.status().message());
    shape = next.value();
  }
  ctx.set_output_type(0, ir::TensorType{ctx.input_type(0).dtype, shape});
  return Status::ok();
}

// Folds the inputs into the output: out = in0 (broadcast), then out = fn(out, in_k) for each k.
// Mean divides the sum by the input count at the end.
template <class Types, class F>
Kernel variadic_kernel(F fn, bool mean) {
  return [fn, mean](KernelContext& ctx) -> Status {
    Tensor& out = *ctx.output(0);
    const bool ok = dispatch<Types>(out.dtype(), [&]<class T>() {
      T* po = out.data<T>();
      const T* first = ctx.input(0)->data<T>();
      for_each_broadcast<1>(out.shape(), {ctx.input(0)->shape()},
                            [&](int64_t i, const std::array<int64_t, 1>& off) { po[i] = first[off[0]]; });
      for (size_t k = 1; k < ctx.input_count(); ++k) {
        const T* in = ctx.input(k)->data<T>();
        for_each_broadcast<1>(out.shape(), {ctx.input(k)->shape()}, [&](int64_t i, const std::array<int64_t, 1>& off) {
          po[i] = store<T>(fn(load(po[i]), load(in[off[0]])));
        });
      }
      if (mean) {
        const auto n = static_cast<Compute<T>>(ctx.input_count());
        for (int64_t i = 0; i < out.element_count(); ++i) po[i] = store<T>(load(po[i]) / n);
      }
    });
    if (!ok) return ctx.error(std::string("unsupported element type ") + dtype_name(out.dtype()));
    return Status::ok();
  };
}

void register_special_forms(OpRegistry& r) {
  for (int v : {1, 7, 12, 13, 15}) r.add(OpDef{"", "Pow", v, pow_rule, pow_kernel});
  for (int v : {1, 6, 7, 9, 16}) r.add(OpDef{"", "PRelu", v, prelu_rule, prelu_kernel});
  for (int v : {9, 16}) r.add(OpDef{"", "Where", v, where_rule, where_kernel});
  for (int v : {1, 6, 8, 12, 13}) {
    r.add(OpDef{"", "Max", v, variadic_rule<NumericTypes>, variadic_kernel<NumericTypes>(MaxFn{}, false)});
    r.add(OpDef{"", "Min", v, variadic_rule<NumericTypes>, variadic_kernel<NumericTypes>(MinFn{}, false)});
  }
  for (int v : {1, 6, 8, 13}) {
    r.add(OpDef{"", "Sum", v, variadic_rule<FloatTypes>, variadic_kernel<FloatTypes>(SumFn{}, false)});
    r.add(OpDef{"", "Mean", v, variadic_rule<FloatTypes>, variadic_kernel<FloatTypes>(SumFn{}, true)});
  }
}

}  // namespace

void register_elementwise_binary_ops(OpRegistry& r) {
  register_arithmetic(r);
  register_comparisons_and_logic(r);
  register_special_forms(r);
}

}  // namespace kiln::ops
