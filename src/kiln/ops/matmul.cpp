// MatMul (numpy matmul: 1-D operands, broadcast batch dims) and Gemm (alpha * A' B' + beta * C).
// Both run one cache-blocked i-k-j product, parallel over rows; integers accumulate exactly with
// wrap-around, 16-bit floats in float.
#include <algorithm>
#include <vector>

#include "kiln/ops/blocked_gemm.h"
#include "kiln/ops/family_support.h"
#include "kiln/ops/matmul.h"
#include "kiln/ops/op_families.h"
#include "kiln/ops/op_helpers.h"

namespace kiln::ops {
namespace {

using MatMulTypes = ConcatTypes<FloatTypes, TypeList<int32_t, int64_t, uint32_t, uint64_t>>;

// Products accumulate in this type: unsigned 64-bit for integers (wraps like numpy), float for
// 16-bit floats, the type itself otherwise.
template <class T>
using ProductAcc = std::conditional_t<std::is_integral_v<T>, uint64_t, Compute<T>>;

// `src` (rows x cols, or cols x rows when `transpose`) as a row-major rows x cols matrix of the
// accumulation type: `src` itself when no conversion is needed, else a copy in `scratch`.
template <class T, class A = ProductAcc<T>>
const A* as_matrix(const T* src, int64_t rows, int64_t cols, bool transpose, std::vector<A>& scratch) {
  if constexpr (std::is_same_v<T, A>) {
    if (!transpose) return src;
  }
  scratch.resize(static_cast<size_t>(rows * cols));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      scratch[static_cast<size_t>(r * cols + c)] = static_cast<A>(load(transpose ? src[c * rows + r] : src[r * cols + c]));
  return scratch.data();
}

}  // namespace

Result<std::optional<ir::Shape>> matmul_output_shape(const InferenceContext& ctx, size_t a_input, size_t b_input) {
  return matmul_output_shape(ctx, ctx.input_type(a_input).shape, ctx.input_type(b_input).shape);
}

Result<std::optional<ir::Shape>> matmul_output_shape(const InferenceContext& ctx, const std::optional<ir::Shape>& a,
                                                     const std::optional<ir::Shape>& b) {
  if (!a || !b) return std::optional<ir::Shape>();
  if (a->rank() == 0 || b->rank() == 0) return ctx.error("operands must have rank >= 1, got " + a->to_string() + " and " + b->to_string());
  const ir::Dim k_a = a->dims().back();
  const ir::Dim k_b = b->rank() == 1 ? (*b)[0] : (*b)[b->rank() - 2];
  if (k_a.is_static() && k_b.is_static() && k_a.value() != k_b.value())
    return ctx.error("inner dimensions differ: " + a->to_string() + " x " + b->to_string());
  const auto batch_of = [](const ir::Shape& s) {
    return ir::Shape(std::vector<ir::Dim>(s.dims().begin(), s.dims().end() - std::min<size_t>(s.rank(), 2)));
  };
  auto batch = broadcast_shapes(a->rank() > 2 ? batch_of(*a) : ir::Shape{}, b->rank() > 2 ? batch_of(*b) : ir::Shape{});
  if (!batch.is_ok()) return ctx.error("batch dimensions: " + batch.status().message());
  std::vector<ir::Dim> out = batch.value().dims();
  if (a->rank() > 1) out.push_back((*a)[a->rank() - 2]);
  if (b->rank() > 1) out.push_back(b->dims().back());
  return std::optional<ir::Shape>(ir::Shape(std::move(out)));
}

namespace {

// ---- MatMul ----

Status matmul_rule(InferenceContext& ctx) {
  KILN_RETURN_IF_ERROR(check_input_count(ctx, 2, 2));
  KILN_RETURN_IF_ERROR(check_input_dtype<MatMulTypes>(ctx, 0));
  KILN_RETURN_IF_ERROR(check_same_dtype(ctx, 0, 1));
  KILN_ASSIGN_OR_RETURN(std::optional<ir::Shape> shape, matmul_output_shape(ctx, 0, 1));
  ctx.set_output_type(0, ir::TensorType{ctx.input_type(0).dtype, std::move(shape)});
  return Status::ok();
}

template <class T>
void matmul_typed(const Tensor& a, const Tensor& b, Tensor& y) {
  using A = ProductAcc<T>;
  const MatMulGeometry g = matmul_geometry(a.shape(), b.shape(), y.shape());
  const int64_t m = g.m, k = g.k, n = g.n;
  std::vector<A> a_scratch, b_scratch, c_acc(static_cast<size_t>(m * n));
  T* out = y.data<T>();
  for_each_matrix_product(g, [&](int64_t i, int64_t ia, int64_t ib) {
    const A* pa = as_matrix<T>(a.data<T>() + ia * m * k, m, k, false, a_scratch);
    const A* pb = as_matrix<T>(b.data<T>() + ib * k * n, k, n, false, b_scratch);
    T* py = out + i * m * n;
    if constexpr (std::is_same_v<T, A>) {
      blocked_gemm(pa, pb, py, m, k, n);
    } else {
      blocked_gemm(pa, pb, c_acc.data(), m, k, n);
      for (int64_t e = 0; e < m * n; ++e) py[e] = store<T>(c_acc[static_cast<size_t>(e)]);
    }
  });
}

Status matmul_kernel(KernelContext& ctx) { return matmul_reference(ctx.node(), *ctx.input(0), *ctx.input(1), *ctx.output(0)); }

// ---- Gemm ----

Status gemm_rule(InferenceContext& ctx) {
  KILN_RETURN_IF_ERROR(check_input_count(ctx, ctx.opset() < 11 ? 3 : 2, 3));
  KILN_RETURN_IF_ERROR(check_input_dtype<MatMulTypes>(ctx, 0));
  KILN_RETURN_IF_ERROR(check_same_dtype(ctx, 0, 1));
  if (ctx.has_input(2)) KILN_RETURN_IF_ERROR(check_same_dtype(ctx, 0, 2));
  const auto& a = ctx.input_type(0).shape;
  const auto& b = ctx.input_type(1).shape;
  ir::TensorType out{ctx.input_type(0).dtype, std::nullopt};
  if (a && b) {
    if (a->rank() != 2 || b->rank() != 2)
      return ctx.error("A and B must be 2-D, got " + a->to_string() + " and " + b->to_string());
    const bool ta = ctx.node().attr_int("transA", 0) != 0, tb = ctx.node().attr_int("transB", 0) != 0;
    const ir::Dim m = (*a)[ta ? 1 : 0], k_a = (*a)[ta ? 0 : 1], k_b = (*b)[tb ? 1 : 0], n = (*b)[tb ? 0 : 1];
    if (k_a.is_static() && k_b.is_static() && k_a.value() != k_b.value())
      return ctx.error("inner dimensions differ: A' is " + m.to_string() + "x" + k_a.to_string() + ", B' is " +
                       k_b.to_string() + "x" + n.to_string());
    out.shape = ir::Shape({m, n});
    if (ctx.has_input(2) && ctx.input_type(2).shape) {
      auto c = broadcast_shapes(*out.shape, *ctx.input_type(2).shape);
      const bool grows = c.is_ok() && c.value().is_static() && out.shape->is_static() && !(c.value() == *out.shape);
      if (!c.is_ok() || grows || ctx.input_type(2).shape->rank() > 2)
        return ctx.error("C of shape " + ctx.input_type(2).shape->to_string() + " does not broadcast to " +
                         out.shape->to_string());
    }
  }
  ctx.set_output_type(0, std::move(out));
  return Status::ok();
}

template <class T>
void gemm_typed(const KernelContext& ctx, int64_t m, int64_t k, int64_t n) {
  using A = ProductAcc<T>;
  const ir::Node& node = ctx.node();
  const bool ta = node.attr_int("transA", 0) != 0, tb = node.attr_int("transB", 0) != 0;
  const double alpha = node.attr_float("alpha", 1.0f), beta = node.attr_float("beta", 1.0f);
  std::vector<A> a_scratch, b_scratch, acc(static_cast<size_t>(m * n));
  blocked_gemm(as_matrix<T>(ctx.input(0)->data<T>(), m, k, ta, a_scratch),
           as_matrix<T>(ctx.input(1)->data<T>(), k, n, tb, b_scratch), acc.data(), m, k, n);
  // Integers stay exact when alpha = beta = 1; otherwise the combination is computed in double.
  const auto combine = [&](A product, A c) -> Compute<T> {
    if constexpr (std::is_integral_v<T>) {
      if (alpha == 1 && beta == 1) return static_cast<T>(product + c);
      return saturating_cast<T>(alpha * static_cast<double>(static_cast<T>(product)) +
                                beta * static_cast<double>(static_cast<T>(c)));
    } else {
      return static_cast<Compute<T>>(alpha * product + beta * c);
    }
  };
  Tensor& y = *ctx.output(0);
  T* out = y.data<T>();
  const Tensor* c = ctx.input(2);
  if (!c) {
    for (int64_t i = 0; i < m * n; ++i) out[i] = store<T>(combine(acc[static_cast<size_t>(i)], A{0}));
    return;
  }
  const T* pc = c->data<T>();
  for_each_broadcast<1>(y.shape(), {c->shape()}, [&](int64_t i, const std::array<int64_t, 1>& off) {
    out[i] = store<T>(combine(acc[static_cast<size_t>(i)], static_cast<A>(load(pc[off[0]]))));
  });
}

Status gemm_kernel(KernelContext& ctx) {
  const Tensor& a = *ctx.input(0);
  const bool ta = ctx.node().attr_int("transA", 0) != 0;
  const int64_t m = a.shape()[ta ? 1 : 0], k = a.shape()[ta ? 0 : 1];
  const int64_t n = ctx.output(0)->shape()[1];
  if (!dispatch<MatMulTypes>(a.dtype(), [&]<class T>() { gemm_typed<T>(ctx, m, k, n); }))
    return ctx.error(std::string("unsupported element type ") + dtype_name(a.dtype()));
  return Status::ok();
}

// Whether dims `from` broadcast to `to` (numpy rules: aligned right, each equal or 1).
bool broadcasts_to(const std::vector<int64_t>& from, const std::vector<int64_t>& to) {
  if (from.size() > to.size()) return false;
  for (size_t i = 0; i < from.size(); ++i)
    if (from[i] != 1 && from[i] != to[to.size() - from.size() + i]) return false;
  return true;
}

// Whether y holds the products of a and b: the walk over the batch reads each operand's matrices
// at y's batch indices, so batch dims that do not broadcast to y's would read past an operand.
// (The fused ops' rules infer y themselves: kiln.Attention's V, kiln.FusedMatMul's operands.)
bool multiplies_into(const std::vector<int64_t>& as, const std::vector<int64_t>& bs, const std::vector<int64_t>& ys) {
  const size_t matrix_dims = static_cast<size_t>(as.size() > 1) + static_cast<size_t>(bs.size() > 1);
  if (ys.size() < matrix_dims) return false;
  const MatMulGeometry g = matmul_geometry(as, bs, ys);
  const std::vector<int64_t> y_matrix(ys.end() - static_cast<std::ptrdiff_t>(matrix_dims), ys.end());
  std::vector<int64_t> want_matrix;
  if (as.size() > 1) want_matrix.push_back(g.m);
  if (bs.size() > 1) want_matrix.push_back(g.n);
  return y_matrix == want_matrix && broadcasts_to(g.a_batch, g.y_batch) && broadcasts_to(g.b_batch, g.y_batch);
}

}  // namespace

Status matmul_reference(const ir::Node& node, const Tensor& a, const Tensor& b, Tensor& y) {
  if (a.rank() == 0 || b.rank() == 0) return invalid_argument(node.describe() + ": matmul operands must have rank >= 1");
  const int64_t k_b = b.rank() == 1 ? b.shape()[0] : b.shape()[b.shape().size() - 2];
  if (a.shape().back() != k_b)
    return invalid_argument(node.describe() + ": inner dimensions differ: " + shape_to_string(a.shape()) + " x " +
                            shape_to_string(b.shape()));
  if (!multiplies_into(a.shape(), b.shape(), y.shape()))
    return invalid_argument(node.describe() + ": " + shape_to_string(a.shape()) + " x " + shape_to_string(b.shape()) +
                            " does not multiply into " + shape_to_string(y.shape()));
  if (!dispatch<MatMulTypes>(a.dtype(), [&]<class T>() { matmul_typed<T>(a, b, y); }))
    return invalid_argument(node.describe() + ": unsupported element type " + dtype_name(a.dtype()));
  return Status::ok();
}

void register_matmul_ops(OpRegistry& r) {
  for (int v : {1, 9, 13}) r.add(OpDef{"", "MatMul", v, matmul_rule, matmul_kernel});
  for (int v : {1, 6, 7, 9, 11, 13}) r.add(OpDef{"", "Gemm", v, gemm_rule, gemm_kernel});
}

}  // namespace kiln::ops
