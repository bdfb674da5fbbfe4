// cpu kernels for quantized products with a 2-D B, exact as the reference's:
// MatMulInteger (int32 output) and QLinearMatMul (requantized to uint8 or int8 with
// ops/quantization.h's arithmetic, so every output equals the reference's). A (uint8 or int8, any
// rank, its rows flattened) times B' (B as int8: uint8 weights shifted by 128) runs on oneDNN's
// int8 matmul without zero points; the zero points, A's per tensor or per row and B's per tensor or
// per column (both shifted alike for uint8 B), fold out afterwards:
//   (A - za)(B' - zb') = A B' - za colsum(B') - rowsum(A) zb' + K za zb'
// with colsum(B') and the packed B' made once for a constant B (per run for one the graph
// computes) and rowsum(A) per run, all exact in int32. As for the integer
// convolutions, where oneDNN's int8 kernel has no VNNI (its 16-bit pair sums may saturate), B' is
// split (split_int8_weights) and two products give 64 * high + low, exactly.
#include <algorithm>
#include <optional>

#include "kiln/ops/op_helpers.h"
#include "kiln/ops/quantization.h"
#include "kiln/providers/cpu/cpu_kernels.h"
#include "kiln/providers/cpu/onednn_support.h"
#include "kiln/providers/cpu/onednn_target.h"

namespace kiln::providers::cpu {
namespace {

using dnnl::memory;

// Where a quantized product's operands are among its node's inputs.
struct ProductOperands {
  size_t a, a_zero, b, b_zero;
};
constexpr ProductOperands kMatMulInteger{0, 2, 1, 3};
constexpr ProductOperands kQLinearMatMul{0, 2, 3, 5};

Capability integer_matmul_supports(const ir::Node& node, const ProductOperands& at) {
  const ir::Value* a = node.input(at.a);
  const ir::Value* b = node.input(at.b);
  if (!is_8bit_tensor(a) || !a->type.shape || a->type.shape->rank() < 1)
    return Capability::no(node.op_type + " of an A that is not a uint8 or int8 tensor of known rank");
  if (!is_8bit_tensor(b) || !b->type.shape || b->type.shape->rank() != 2)
    return Capability::no(node.op_type + " whose B is not a 2-D uint8 or int8 matrix");
  return Capability::yes();
}

// InvalidModel unless a zero point or scale holds one value, or one per index (rows of A: `per`
// is A's row count M; columns of B: N).
Status check_count(const ops::KernelContext& ctx, int64_t count, int64_t per, const std::string& what) {
  if (count == 1 || count == per) return Status::ok();
  return ctx.error(what + " holds " + std::to_string(count) + " values; expected 1 or " + std::to_string(per));
}

std::vector<int32_t> integers_of(const Tensor* t) {
  std::vector<int32_t> v;
  if (!t) return {0};
  v.resize(static_cast<size_t>(t->element_count()));
  ops::dispatch<ops::TypeList<int8_t, uint8_t>>(t->dtype(), [&]<class T>() { std::copy_n(t->data<T>(), v.size(), v.begin()); });
  return v;
}

// B' (B as int8) in the layout the product wants (whole, or as its high and low parts), its
// column sums, and B's zero point shifted alike, per column.
struct PreparedB {
  std::vector<memory> parts;
  std::vector<int32_t> column_sums, zero;
};

Result<PreparedB> prepare_b(const ir::Node& node, const Tensor& b, const Tensor* zero, const memory::desc& wanted, bool split) {
  const int64_t k = b.shape()[0], n = b.shape()[1];
  const bool unsigned_b = b.dtype() == DType::kUInt8;
  std::vector<int8_t> shifted(static_cast<size_t>(b.element_count()));
  for (size_t i = 0; i < shifted.size(); ++i)
    shifted[i] = unsigned_b ? static_cast<int8_t>(static_cast<int>(b.data<uint8_t>()[i]) - 128) : b.data<int8_t>()[i];
  PreparedB p;
  p.column_sums.assign(static_cast<size_t>(n), 0);
  for (int64_t r = 0; r < k; ++r)
    for (int64_t c = 0; c < n; ++c) p.column_sums[static_cast<size_t>(c)] += shifted[static_cast<size_t>(r * n + c)];
  auto pack = [&](std::vector<int8_t>& plain) {
    return reorder_to(memory(memory::desc({k, n}, memory::data_type::s8, memory::format_tag::ab), cpu_engine(), plain.data()), wanted);
  };
  if (split) {
    SplitInt8Weights parts = split_int8_weights(shifted);
    p.parts = {pack(parts.high), pack(parts.low)};
  } else {
    p.parts = {pack(shifted)};
  }
  if (zero && zero->dtype() != b.dtype()) return invalid_model(node.describe() + ": b_zero_point's type is not B's");
  if (zero && zero->element_count() != 1 && zero->element_count() != n)
    return invalid_model(node.describe() + ": b_zero_point must hold one value or one per column of B");
  const std::vector<int32_t> z = integers_of(zero);
  p.zero.resize(static_cast<size_t>(n));
  for (int64_t c = 0; c < n; ++c) p.zero[static_cast<size_t>(c)] = z[z.size() == 1 ? 0 : static_cast<size_t>(c)] - (unsigned_b ? 128 : 0);
  return p;
}

// (A - za)(B - zb) for one run, into `out` (rows x N int32), using `row_sums` (rows int32s).
class IntegerProduct {
 public:
  static Result<IntegerProduct> build(const ir::Node& node, KernelBuild& build, const ProductOperands& at);
  int64_t rows() const { return rows_; }
  int64_t columns() const { return n_; }
  // A's rows per matrix (its second-to-last dim; 1 for a vector): the count of a per-row parameter.
  int64_t rows_per_matrix() const { return m_; }
  Status accumulate(const ops::KernelContext& ctx, int32_t* out, int32_t* row_sums) const;

 private:
  ProductOperands at_;
  int64_t rows_ = 0, m_ = 1, k_ = 0, n_ = 0;
  bool signed_a_ = false, split_ = false;
  memory::desc a_desc_, y_desc_, b_wanted_;
  dnnl::matmul main_;
  std::shared_ptr<const PreparedB> constant_b_;  // null when the graph computes B or its zero point
  std::shared_ptr<std::vector<int32_t>> low_part_;  // the low part's product, when split
  std::shared_ptr<dnnl::stream> stream_;
};

Result<IntegerProduct> IntegerProduct::build(const ir::Node& node, KernelBuild& build, const ProductOperands& at) {
  IntegerProduct p;
  p.at_ = at;
  const std::vector<int64_t> a = input_dims(node, at.a), b = input_dims(node, at.b);
  p.k_ = b[0];
  p.n_ = b[1];
  if (a.back() != p.k_) return invalid_model(node.describe() + ": A's last dim " + std::to_string(a.back()) + " is not B's first");
  p.rows_ = p.k_ == 0 ? 0 : shape_element_count(a) / p.k_;
  p.m_ = a.size() >= 2 ? a[a.size() - 2] : 1;
  p.signed_a_ = node.input(at.a)->type.dtype == DType::kInt8;
  p.a_desc_ = memory::desc({p.rows_, p.k_}, p.signed_a_ ? memory::data_type::s8 : memory::data_type::u8, memory::format_tag::ab);
  p.y_desc_ = memory::desc({p.rows_, p.n_}, memory::data_type::s32, memory::format_tag::ab);
  const memory::desc any_b({p.k_, p.n_}, memory::data_type::s8, memory::format_tag::any);
  const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(p.a_desc_, any_b, p.y_desc_), cpu_engine());
  p.main_ = dnnl::matmul(pd);
  check_implementation({node, build}, p.main_);
  p.b_wanted_ = pd.weights_desc();
  p.split_ = !runs_int8_with_vnni(p.main_);
  if (p.split_) p.low_part_ = std::make_shared<std::vector<int32_t>>(static_cast<size_t>(p.rows_ * p.n_));
  const ir::Value* zero = node.input(at.b_zero);
  if (node.input(at.b)->is_constant() && (!zero || zero->is_constant())) {
    KILN_ASSIGN_OR_RETURN(PreparedB prepared, prepare_b(node, *constant_input(node, at.b), zero ? constant_input(node, at.b_zero) : nullptr,
                                                        p.b_wanted_, p.split_));
    p.constant_b_ = std::make_shared<const PreparedB>(std::move(prepared));
  }
  p.stream_ = std::make_shared<dnnl::stream>(cpu_engine());
  return p;
}

Status IntegerProduct::accumulate(const ops::KernelContext& ctx, int32_t* out, int32_t* row_sums) const {
  const Tensor& a = *ctx.input(at_.a);
  const Tensor* a_zero_tensor = ctx.input(at_.a_zero);
  if (a_zero_tensor) {
    if (a_zero_tensor->dtype() != a.dtype()) return ctx.error("a_zero_point's type is not A's");
    KILN_RETURN_IF_ERROR(check_count(ctx, a_zero_tensor->element_count(), m_, "a_zero_point"));
  }
  const std::vector<int32_t> a_zero = integers_of(a_zero_tensor);
  std::shared_ptr<const PreparedB> b = constant_b_;
  if (!b) {
    const Tensor& given = *ctx.input(at_.b);
    if (given.shape() != std::vector<int64_t>{k_, n_}) return ctx.error("B's shape " + shape_to_string(given.shape()) + " is not the plan's");
    std::optional<Result<PreparedB>> prepared;
    KILN_RETURN_IF_ERROR(guard(ctx.node(), [&] {
      prepared.emplace(prepare_b(ctx.node(), given, ctx.input(at_.b_zero), b_wanted_, split_));
      return Status::ok();
    }));
    KILN_RETURN_IF_ERROR(prepared->status());
    b = std::make_shared<const PreparedB>(std::move(*prepared).value());
  }
  KILN_RETURN_IF_ERROR(guard(ctx.node(), [&] {
    for (size_t part = 0; part < b->parts.size(); ++part) {
      int32_t* target = part == 0 ? out : low_part_->data();
      main_.execute(*stream_, {{DNNL_ARG_SRC, wrap(a_desc_, a)}, {DNNL_ARG_WEIGHTS, b->parts[part]},
                               {DNNL_ARG_DST, memory(y_desc_, cpu_engine(), target)}});
    }
    stream_->wait();
    return Status::ok();
  }));
  const int64_t k = k_, n = n_;
  const int32_t* low = low_part_ ? low_part_->data() : nullptr;
#pragma omp parallel for schedule(static) if (rows_ * (k + n) >= (1 << 15))
  for (int64_t r = 0; r < rows_; ++r) {
    int32_t sum = 0;
    if (signed_a_) {
      const int8_t* row = a.data<int8_t>() + r * k;
      for (int64_t i = 0; i < k; ++i) sum += row[i];
    } else {
      const uint8_t* row = a.data<uint8_t>() + r * k;
      for (int64_t i = 0; i < k; ++i) sum += row[i];
    }
    row_sums[r] = sum;
    const int32_t za = a_zero[a_zero.size() == 1 ? 0 : static_cast<size_t>(r % m_)];
    int32_t* y = out + r * n;
    if (low)
      for (int64_t c = 0; c < n; ++c) y[c] = y[c] * 64 + low[r * n + c];
    for (int64_t c = 0; c < n; ++c) {
      const int32_t zb = b->zero[static_cast<size_t>(c)];
      y[c] += -za * b->column_sums[static_cast<size_t>(c)] - sum * zb + static_cast<int32_t>(k) * za * zb;
    }
  }
  return Status::ok();
}

Result<ops::Kernel> build_matmul_integer(const ir::Node& node, KernelBuild& build) {
  KILN_ASSIGN_OR_RETURN(IntegerProduct product, IntegerProduct::build(node, build, kMatMulInteger));
  return ops::Kernel([product = std::move(product)](ops::KernelContext& ctx) -> Status {
    auto* row_sums = reinterpret_cast<int32_t*>(run_scratch_floats(static_cast<size_t>(product.rows())));
    return product.accumulate(ctx, ctx.output(0)->data<int32_t>(), row_sums);
  });
}

Capability qlinear_matmul_supports(const ir::Node& node) {
  const Capability product = integer_matmul_supports(node, kQLinearMatMul);
  if (!product.supported) return product;
  if (!is_8bit_tensor(node.input(7))) return Capability::no("QLinearMatMul whose output type is not uint8 or int8");
  return Capability::yes();
}

// Inputs: a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point. Each
// accumulator requantizes with a_scale (per tensor or row) * b_scale (per tensor or column) / y_scale.
Result<ops::Kernel> build_qlinear_matmul(const ir::Node& node, KernelBuild& build) {
  KILN_ASSIGN_OR_RETURN(IntegerProduct product, IntegerProduct::build(node, build, kQLinearMatMul));
  return ops::Kernel([product = std::move(product)](ops::KernelContext& ctx) -> Status {
    const int64_t rows = product.rows(), n = product.columns(), m = product.rows_per_matrix();
    KILN_ASSIGN_OR_RETURN(const std::vector<float> a_scale, ops::read_floats(*ctx.input(1), "a_scale"));
    KILN_ASSIGN_OR_RETURN(const std::vector<float> b_scale, ops::read_floats(*ctx.input(4), "b_scale"));
    KILN_ASSIGN_OR_RETURN(const std::vector<float> y_scale, ops::read_floats(*ctx.input(6), "y_scale"));
    KILN_RETURN_IF_ERROR(check_count(ctx, static_cast<int64_t>(a_scale.size()), m, "a_scale"));
    KILN_RETURN_IF_ERROR(check_count(ctx, static_cast<int64_t>(b_scale.size()), n, "b_scale"));
    const Tensor& y_zero = *ctx.input(7);
    if (y_scale.size() != 1 || y_zero.element_count() != 1) return ctx.error("y_scale and y_zero_point must hold one value each");
    // Accumulators, then the row sums, in the run scratch (as many floats as int32s).
    auto* acc = reinterpret_cast<int32_t*>(run_scratch_floats(static_cast<size_t>(rows * n + rows)));
    KILN_RETURN_IF_ERROR(product.accumulate(ctx, acc, acc + rows * n));
    Tensor& out = *ctx.output(0);
    ops::dispatch<ops::TypeList<uint8_t, int8_t>>(out.dtype(), [&]<class Q>() {
      const int64_t zero = y_zero.dtype() == DType::kInt8 ? y_zero.data<int8_t>()[0] : y_zero.data<uint8_t>()[0];
      Q* y = out.data<Q>();
#pragma omp parallel for schedule(static) if (rows * n >= (1 << 15))
      for (int64_t r = 0; r < rows; ++r) {
        const float as = a_scale[a_scale.size() == 1 ? 0 : static_cast<size_t>(r % m)];
        for (int64_t c = 0; c < n; ++c) {
          const float multiplier = ops::requant_multiplier(as, b_scale[b_scale.size() == 1 ? 0 : static_cast<size_t>(c)], y_scale[0]);
          y[r * n + c] = ops::requantize<Q>(acc[r * n + c], multiplier, zero);
        }
      }
    });
    return Status::ok();
  });
}

}  // namespace

void add_integer_matmul_kernels(CpuKernelTable& table) {
  table["MatMulInteger"] = CpuKernel{[](const ir::Node& n) { return integer_matmul_supports(n, kMatMulInteger); }, build_matmul_integer};
  table["QLinearMatMul"] = CpuKernel{qlinear_matmul_supports, build_qlinear_matmul};
}

}  // namespace kiln::providers::cpu
