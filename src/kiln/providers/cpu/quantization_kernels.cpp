// cpu kernels for element-wise quantization, exact as the reference's (ops/quantization.h holds
// the shared rounding, saturation and parameter layouts):
//  - DynamicQuantizeLinear: the range in one parallel min/max pass, then the parallel quantize.
//  - QuantizeLinear and DequantizeLinear (opsets 10 to 21; float32 data and results; every quantized
//    type: 8- and 16-bit integers, 8-bit floats, 4-bit integers): per tensor or per axis, over
//    [outer, axis, inner] runs, threaded over runs when the tensor is large; blocks (opset 21)
//    element by element. Scales and zero points may be computed by the graph: they are read on
//    each run. The 16-bit float forms run the reference's loop (reference_loop_kernels.cpp).
#include <algorithm>
#include <limits>

#include "kiln/ops/op_helpers.h"
#include "kiln/ops/quantization.h"
#include "kiln/providers/cpu/cpu_kernels.h"

namespace kiln::providers::cpu {
namespace {

// Elements below which a quantization runs on the calling thread.
constexpr int64_t kParallelElements = int64_t{1} << 15;

using QuantizedOrInt32 = ops::ConcatTypes<ops::LinearQuantizedTypes, ops::TypeList<int32_t>>;

Capability dynamic_quantize_supports(const ir::Node& node) {
  const ir::Value* x = node.input(0);
  if (!x || !x->type.is_tensor() || x->type.dtype != DType::kFloat) return Capability::no("DynamicQuantizeLinear of a value that is not float32");
  return Capability::yes();
}

Result<ops::Kernel> build_dynamic_quantize(const ir::Node&) {
  return ops::Kernel([](ops::KernelContext& ctx) -> Status {
    const Tensor& x = *ctx.input(0);
    const float* in = x.data<float>();
    const int64_t n = x.element_count();
    const bool parallel = n >= (1 << 15);
    float lo = 0, hi = 0;
#pragma omp parallel for reduction(min : lo) reduction(max : hi) schedule(static) if (parallel)
    for (int64_t e = 0; e < n; ++e) {
      lo = std::min(lo, in[e]);
      hi = std::max(hi, in[e]);
    }
    const ops::DynamicQuantization q = ops::dynamic_quantization(lo, hi);
    uint8_t* out = ctx.output(0)->data<uint8_t>();
#pragma omp parallel for schedule(static) if (parallel)
    for (int64_t e = 0; e < n; ++e) out[e] = q.quantize(in[e]);
    if (Tensor* s = ctx.output(1)) *s->data<float>() = q.scale;
    if (Tensor* z = ctx.output(2)) *z->data<uint8_t>() = q.zero_point;
    return Status::ok();
  });
}

// A quantization's data, scale and optional zero point as the run gives them.
struct LinearParams {
  ops::ParamLayout layout;
  int64_t outer = 1;  // blocks of layout.count * layout.inner elements
  std::vector<float> scale;
  std::vector<int64_t> zero_point;
};

Result<LinearParams> linear_params(const ops::KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  LinearParams p;
  KILN_ASSIGN_OR_RETURN(p.layout, ops::linear_param_layout(ctx.node(), x.shape(), ctx.input(1)->shape(), "scale"));
  KILN_ASSIGN_OR_RETURN(p.scale, ops::read_floats(*ctx.input(1), "scale"));
  const Tensor* zp = ctx.input(2);
  if (zp && zp->shape() != ctx.input(1)->shape())
    return ctx.error("zero point of shape " + shape_to_string(zp->shape()) + " differs from the scale's " +
                     shape_to_string(ctx.input(1)->shape()));
  p.zero_point.assign(static_cast<size_t>(p.layout.count), 0);
  if (zp)
    ops::dispatch<QuantizedOrInt32>(zp->dtype(), [&]<class Z>() {
      const Z* z = zp->data<Z>();
      for (int64_t i = 0; i < p.layout.count; ++i) p.zero_point[static_cast<size_t>(i)] = static_cast<int64_t>(ops::load(z[i]));
    });
  const int64_t block = p.layout.count * p.layout.inner;
  p.outer = block == 0 ? 0 : x.element_count() / block;
  return p;
}

// Calls fn(first, count, parameter index) over runs of elements that share one scale and zero
// point (chunks of the tensor when it has one; single elements for blocks), threaded over the runs
// when the tensor is large.
template <class Fn>
void for_each_parameter_run(const LinearParams& p, int64_t elements, Fn fn) {
  constexpr int64_t kChunk = int64_t{1} << 14;
  if (p.layout.block > 0) {
#pragma omp parallel for schedule(static) if (elements >= kParallelElements)
    for (int64_t e = 0; e < elements; ++e) fn(e, 1, p.layout.at(e));
    return;
  }
  const bool single = p.layout.count == 1;
  const int64_t length = single ? kChunk : p.layout.inner;
  const int64_t runs = single ? (elements + kChunk - 1) / kChunk : p.outer * p.layout.count;
#pragma omp parallel for schedule(static) if (elements >= kParallelElements && runs > 1)
  for (int64_t r = 0; r < runs; ++r) fn(r * length, std::min(length, elements - r * length), single ? 0 : r % p.layout.count);
}

Capability linear_quantization_supports(const ir::Node& node, bool quantize) {
  const ir::Value* x = node.input(0);
  const ir::Value* y = node.outputs.empty() ? nullptr : node.outputs[0];
  if (!x || !x->type.is_tensor() || !y) return Capability::no(node.op_type + " of a value that is not a tensor");
  const DType t = x->type.dtype, out = y->type.dtype;
  const bool data_ok = quantize ? (t == DType::kFloat || t == DType::kInt32) : ops::list_has(QuantizedOrInt32{}, t);
  if (!data_ok) return Capability::no(node.op_type + " of " + dtype_name(t) + " data");
  const bool out_ok = quantize ? ops::list_has(ops::LinearQuantizedTypes{}, out) : out == DType::kFloat;
  if (!out_ok) return Capability::no(node.op_type + " giving " + dtype_name(out));
  return Capability::yes();
}

// y = saturate(round(x / scale) + zero_point); float data divides in float like the reference.
Result<ops::Kernel> build_quantize(const ir::Node& node) {
  const bool saturate = node.attr_int("saturate", 1) != 0;
  return ops::Kernel([saturate](ops::KernelContext& ctx) -> Status {
    KILN_ASSIGN_OR_RETURN(const LinearParams p, linear_params(ctx));
    const Tensor& x = *ctx.input(0);
    Tensor& y = *ctx.output(0);
    const bool ok = ops::dispatch<ops::LinearQuantizedTypes>(y.dtype(), [&]<class Q>() {
      ops::dispatch<ops::TypeList<float, int32_t>>(x.dtype(), [&]<class X>() {
        using Div = std::conditional_t<std::is_same_v<X, float>, float, double>;
        const X* in = x.data<X>();
        Q* out = y.data<Q>();
        for_each_parameter_run(p, x.element_count(), [&](int64_t first, int64_t count, int64_t k) {
          const auto scale = static_cast<Div>(p.scale[static_cast<size_t>(k)]);
          const int64_t zero = p.zero_point[static_cast<size_t>(k)];
          for (int64_t e = first; e < first + count; ++e) out[e] = ops::quantize_element<Q>(static_cast<Div>(in[e]) / scale, zero, saturate);
        });
      });
    });
    return ok ? Status::ok() : ctx.error(std::string("unsupported output type ") + dtype_name(y.dtype()));
  });
}

// y = (x - zero_point) * scale, in float like the reference.
Result<ops::Kernel> build_dequantize(const ir::Node&) {
  return ops::Kernel([](ops::KernelContext& ctx) -> Status {
    KILN_ASSIGN_OR_RETURN(const LinearParams p, linear_params(ctx));
    const Tensor& x = *ctx.input(0);
    float* out = ctx.output(0)->data<float>();
    ops::dispatch<QuantizedOrInt32>(x.dtype(), [&]<class X>() {
      const X* in = x.data<X>();
      for_each_parameter_run(p, x.element_count(), [&](int64_t first, int64_t count, int64_t k) {
        const float scale = p.scale[static_cast<size_t>(k)];
        const auto zero = static_cast<float>(p.zero_point[static_cast<size_t>(k)]);
        for (int64_t e = first; e < first + count; ++e) out[e] = (static_cast<float>(ops::load(in[e])) - zero) * scale;
      });
    });
    return Status::ok();
  });
}

}  // namespace

void add_quantization_kernels(CpuKernelTable& table) {
  table["DynamicQuantizeLinear"] = node_only(dynamic_quantize_supports, build_dynamic_quantize);
  table["QuantizeLinear"] = node_only([](const ir::Node& n) { return linear_quantization_supports(n, true); }, build_quantize);
  table["DequantizeLinear"] = node_only([](const ir::Node& n) { return linear_quantization_supports(n, false); }, build_dequantize);
}

}  // namespace kiln::providers::cpu
