// cpu kernels for MatMul, kiln.FusedMatMul and Gemm: oneDNN matmul primitives built for the plan's
// shapes. A constant right-hand side (the weights of Linear layers) is reordered once into oneDNN's
// preferred layout; a product of an N-d activation by a 2-d matrix runs as one 2-d product over
// the flattened rows. FusedMatMul's bias is the primitive's bias; residual and activation are
// post-ops (epilogue.h). A node marked bfloat16 or int8 (ops/numeric_precision.h) with constant
// weights packs them in that type (int8: symmetric per output column, weight_scales) and converts
// its left operand on each run (int8: quantized per tensor, product_precision.h); it accumulates
// in float32 or int32 and writes float32, or, for a value kept bfloat16 between bf16 products or
// uint8 between int8 products (ops::kOutputDtypeAttribute), reads and writes it as stored (a uint8
// output quantized by the epilogue's last post-op).
#include <memory>
#include <numeric>
#include <optional>

#include "kiln/providers/cpu/cpu_kernels.h"
#include "kiln/providers/cpu/epilogue.h"
#include "kiln/providers/cpu/onednn_support.h"
#include "kiln/providers/cpu/onednn_target.h"
#include "kiln/providers/cpu/product_precision.h"

namespace kiln::providers::cpu {
namespace {

using dnnl::memory;

// One product dst = src x weights (+ bias), with the descriptors the kernel binds at run time.
struct ProductState {
  dnnl::matmul primitive;
  memory::desc bias, dst;
  memory::desc src_read;           // what the primitive reads: input 0, or its bfloat16 or uint8 copy
  InputConversion src_conversion;  // src into src_read (bfloat16)
  Int8Product int8;                // src into src_read (int8), and the run's scales
  PrimitiveWeights weights;
  bool has_bias = false;
  dnnl::stream stream{cpu_engine()};
  PrimitiveArgs args;  // the arguments of the last run
};

// Builds the primitive, with the node's epilogue (residual, activation) when `epilogue`;
// `weights_view` describes how node input b's storage is read. Constant weights are prepacked into
// the layout (and, for a reduced precision, the type) the primitive prefers.
std::shared_ptr<ProductState> make_product(const ir::Node& node, KernelBuild& build, size_t b, const memory::desc& src,
                                           const memory::desc& weights_view, const memory::desc* bias,
                                           const memory::desc& dst, bool epilogue = false) {
  auto state = std::make_shared<ProductState>();
  state->dst = dst;
  state->has_bias = bias != nullptr;
  if (bias) state->bias = *bias;
  const bool constant = constant_input(node, b) != nullptr;
  const ops::Precision precision = constant ? ops::node_precision(node) : ops::Precision::kFp32;
  state->src_read = product_activation_desc(src, precision);
  const memory::desc weights =
      constant ? memory::desc(weights_view.dims(), product_data_type(precision), memory::format_tag::any) : weights_view;
  const auto desc = bias ? dnnl::matmul::desc(state->src_read, weights, *bias, dst) : dnnl::matmul::desc(state->src_read, weights, dst);
  // The node's epilogue (when asked for) after `first`.
  const auto attributes = [&](dnnl::post_ops first) {
    if (epilogue) return epilogue_attr(node, std::move(first));
    dnnl::primitive_attr attr;
    attr.set_post_ops(first);
    return attr;
  };
  std::optional<PrimitiveWeights::Quantization> quantization;
  std::optional<dnnl::matmul::primitive_desc> pd;
  if (precision == ops::Precision::kInt8) {
    const int columns = 1 << (dst.dims().size() - 1);  // the output's columns, the weights' output channels
    for (const auto form : {Int8Product::first_form(node), Int8Product::Form::kRuntimeOutputScales}) {
      state->int8 = Int8Product(node, form);
      dnnl::primitive_attr attr = attributes(state->int8.first_post_ops(dst.dims().size()));
      state->int8.add_attributes(attr, columns);
      pd.emplace(desc, attr, cpu_engine());
      if (!is_reference_implementation(pd->impl_info_str())) break;
    }
    quantization = PrimitiveWeights::Quantization{ops::weight_channel_axis(node), state->int8.weight_scales()};
  } else {
    state->src_conversion = InputConversion(src, state->src_read);
    build.evidence.record_activation_reorders(int(state->src_conversion.active()));
    pd.emplace(desc, attributes({}), cpu_engine());
  }
  state->primitive = checked({node, build}, dnnl::matmul(*pd));
  state->weights = PrimitiveWeights(node, b, weights_view, *pd, build, quantization);
  return state;
}

// Runs the product on input 0 (and the weights, and bias input `bias` when given).
ops::Kernel product_kernel(std::shared_ptr<ProductState> state, std::optional<size_t> bias) {
  return [state, bias](ops::KernelContext& ctx) {
    return guard(ctx.node(), [&] {
      PrimitiveArgs& args = state->args;
      const Tensor& a = *ctx.input(0);
      args.set(DNNL_ARG_SRC, state->src_read,
               state->int8.active() ? state->int8.quantize(a.raw_data(), a.element_count(), args)
                                    : state->src_conversion.data_for_run(a.raw_data(), state->stream));
      args.set(DNNL_ARG_WEIGHTS, state->weights.for_run(ctx));
      args.set(DNNL_ARG_DST, state->dst, *ctx.output(0));
      if (bias) {
        const float* b = ctx.input(*bias)->data<float>();
        args.set(DNNL_ARG_BIAS, state->bias, state->int8.active() ? state->int8.prescaled_bias(b) : b);
      }
      KILN_RETURN_IF_ERROR(prepare_residual(ctx));
      state->primitive.execute(state->stream, args.map());
      state->stream.wait();
      return Status::ok();
    });
  };
}

// ---- MatMul ----

Capability matmul_supports(const ir::Node& node) {
  Capability c = product_tensors(node, {0, 1, 2, kResidualInput});
  if (!c.supported) return c;
  if (node.inputs[0]->type.shape->rank() < 2 || node.inputs[1]->type.shape->rank() < 2)
    return Capability::no("MatMul of a 1-d operand (cpu needs matrices)");
  return epilogue_supported(node);
}

std::vector<int64_t> left_padded(std::vector<int64_t> dims, size_t rank) {
  dims.insert(dims.begin(), rank - dims.size(), 1);
  return dims;
}

// MatMul and FusedMatMul (bias along the last dim: [1, ..., 1, N]).
Result<ops::Kernel> build_matmul(const ir::Node& node, KernelBuild& build) {
  const std::vector<int64_t> a = input_dims(node, 0), b = input_dims(node, 1), y = output_dims(node, 0);
  const bool has_bias = node.input(2) != nullptr;
  const std::optional<size_t> bias_input = has_bias ? std::optional<size_t>(2) : std::nullopt;
  if (b.size() == 2) {  // rows of every batch item at once: [prod(a[:-1]), K] x [K, N]
    const int64_t rows = std::accumulate(a.begin(), a.end() - 1, int64_t{1}, std::multiplies<>());
    const memory::desc bias = row_major_desc({1, b[1]});
    return product_kernel(make_product(node, build, 1, in_stored_type(row_major_desc({rows, a.back()}), *node.inputs[0]),
                                       row_major_desc(b), has_bias ? &bias : nullptr,
                                       in_stored_type(row_major_desc({rows, b[1]}), *node.outputs[0]), true),
                          bias_input);
  }
  std::vector<int64_t> bias_dims(y.size(), 1);
  bias_dims.back() = y.back();
  const memory::desc bias = row_major_desc(bias_dims);
  return product_kernel(make_product(node, build, 1, in_stored_type(row_major_desc(left_padded(a, y.size())), *node.inputs[0]),
                                     row_major_desc(left_padded(b, y.size())), has_bias ? &bias : nullptr,
                                     in_stored_type(row_major_desc(y), *node.outputs[0]), true),
                        bias_input);
}

// ---- Gemm: Y = alpha * A' B' + beta * C ----

Capability gemm_supports(const ir::Node& node) {
  Capability c = float_tensors(node, {0, 1, 2});
  if (!c.supported) return c;
  if (node.input(2) && node.inputs[2]->type.shape->rank() > 2) return Capability::no("Gemm bias of rank > 2");
  return Capability::yes();
}

Result<ops::Kernel> build_gemm(const ir::Node& node, KernelBuild& build) {
  const std::vector<int64_t> a = input_dims(node, 0), b = input_dims(node, 1), y = output_dims(node, 0);
  const bool trans_a = node.attr_int("transA", 0) != 0, trans_b = node.attr_int("transB", 0) != 0;
  const float alpha = node.attr_float("alpha", 1.0f), beta = node.input(2) ? node.attr_float("beta", 1.0f) : 0.0f;
  const int64_t m = y[0], n = y[1], k = trans_a ? a[0] : a[1];
  // A transposed storage [K, M] read as [M, K]; likewise B.
  const memory::desc src = trans_a ? strided_desc({m, k}, {1, m}) : row_major_desc({m, k});
  const memory::desc weights = trans_b ? strided_desc({k, n}, {1, k}) : row_major_desc({k, n});
  const bool plain = alpha == 1.0f && (beta == 1.0f || !node.input(2));
  if (plain && !node.input(2)) return product_kernel(make_product(node, build, 1, src, weights, nullptr, row_major_desc(y)), std::nullopt);
  const std::vector<int64_t> c = node.input(2) ? left_padded(input_dims(node, 2), 2) : std::vector<int64_t>{1, 1};
  if (plain && c[0] == 1 && c[1] == n) {  // one bias per column: the primitive's own
    const memory::desc bias = row_major_desc(c);
    return product_kernel(make_product(node, build, 1, src, weights, &bias, row_major_desc(y)), size_t{2});
  }
  // C broadcast otherwise ([M, 1], [1, 1], [M, N]), or alpha or beta not 1: oneDNN's matmul has
  // only its reference implementation for such a bias, so the product runs without it and
  // alpha * product + beta * C is formed after.
  ops::Kernel product = product_kernel(make_product(node, build, 1, src, weights, nullptr, row_major_desc(y)), std::nullopt);
  return ops::Kernel([product, c, m, n, alpha, beta](ops::KernelContext& ctx) {
    KILN_RETURN_IF_ERROR(product(ctx));
    const float* bias = ctx.input(2) ? ctx.input(2)->data<float>() : nullptr;
    float* out = ctx.output(0)->data<float>();
    const int64_t row_step = c[0] == 1 ? 0 : c[1], column_step = c[1] == 1 ? 0 : 1;
#pragma omp parallel for if (m * n > (int64_t{1} << 15))
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j)
        out[i * n + j] = alpha * out[i * n + j] + (bias ? beta * bias[i * row_step + j * column_step] : 0.0f);
    return Status::ok();
  });
}

}  // namespace

void add_matmul_kernels(CpuKernelTable& table) {
  table["MatMul"] = {matmul_supports, build_matmul};
  table["kiln.FusedMatMul"] = {matmul_supports, build_matmul};
  table["Gemm"] = {gemm_supports, build_gemm};
}

}  // namespace kiln::providers::cpu
