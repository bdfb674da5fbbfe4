// cpu kernels for dynamic quantization: DynamicQuantizeLinear and ConvInteger, exact as the
// reference's (ops/quantization.h holds the shared rounding and range arithmetic).
//  - DynamicQuantizeLinear: the range in one parallel min/max pass, then the parallel quantize.
//  - ConvInteger (uint8 activations with a zero point, uint8 or int8 constant weights with a per-
//    tensor or per-channel zero point) on oneDNN's int8 convolution, which takes the activations'
//    zero point but only int8 weights without one: weights w become w - 128 (uint8) or stay (int8),
//    with a zero point z' = z - 128 (or z) folded out afterwards:
//      conv(x - xz, w - z) = conv(x - xz, w') - z' * window_sum(x - xz)
//    where window_sum, the sum of (x - xz) over a group's channels and a window, is Kiln's own
//    loop (channel sums, then the window's taps). All sums are exact in int32. oneDNN's int8
//    kernels on CPUs without VNNI may saturate their 16-bit intermediate sums (vpmaddubsw): there
//    the kernel is refused (UnsupportedTarget) and the policy's next provider runs the node.
#include <algorithm>
#include <limits>

#include "kiln/ops/conv.h"
#include "kiln/ops/quantization.h"
#include "kiln/providers/cpu/cpu_kernels.h"
#include "kiln/providers/cpu/onednn_support.h"
#include "kiln/providers/cpu/onednn_target.h"

namespace kiln::providers::cpu {
namespace {

using dnnl::memory;

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

Capability conv_integer_supports(const ir::Node& node) {
  const ir::Value* x = node.input(0);
  const ir::Value* w = node.input(1);
  if (!x || !x->type.is_tensor() || x->type.dtype != DType::kUInt8) return Capability::no("ConvInteger of activations that are not uint8");
  if (!w || !w->is_constant() || (w->type.dtype != DType::kUInt8 && w->type.dtype != DType::kInt8))
    return Capability::no("ConvInteger with weights computed by the graph");
  if (node.input(3) && !node.input(3)->is_constant()) return Capability::no("ConvInteger with a weight zero point computed by the graph");
  if (!x->type.shape || x->type.shape->rank() != 4) return Capability::no("ConvInteger over other than 2 spatial axes");
  return Capability::yes();
}

// A oneDNN int8 convolution: u8 activations with a run-time zero point, s8 weights, s32 output.
dnnl::convolution_forward::primitive_desc int8_conv(const memory::desc& src, const memory::desc& weights, const memory::desc& dst,
                                                    const ops::ConvProblem& p, const memory::dims& pad_right) {
  memory::dims strides, dilations, pad_left;
  for (size_t i = 0; i < p.grid.strides.size(); ++i) {
    strides.push_back(p.grid.strides[i]);
    dilations.push_back(p.grid.dilations[i] - 1);
    pad_left.push_back(p.grid.pads_begin[i]);
  }
  const dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, src, weights,
                                             dst, strides, dilations, pad_left, pad_right);
  dnnl::primitive_attr attr;
  attr.set_zero_points(DNNL_ARG_SRC, 0, {DNNL_RUNTIME_S32_VAL});
  return {desc, attr, cpu_engine()};
}

// UnsupportedTarget when `primitive` would run int8 products without VNNI (they may saturate).
Status require_vnni(const ir::Node& node, const dnnl::primitive& primitive) {
  const std::string impl = implementation_of(primitive);
  const std::vector<std::string> features = implementation_features(impl);
  if (std::find(features.begin(), features.end(), "avx512vnni") != features.end() ||
      std::find(features.begin(), features.end(), "avxvnni") != features.end())
    return Status::ok();
  return unsupported_target(node.describe() + ": oneDNN's int8 convolution here is '" + impl +
                            "', without VNNI, whose 16-bit intermediate sums may saturate");
}

// sums[n, g, position] = sum over group g's channels and the window at `position` of (x - xz);
// taps outside the image (padding) add nothing.
void window_sums(const uint8_t* x, int32_t x_zero, const ops::ConvProblem& p, int32_t* sums) {
  const int64_t image = shape_element_count(p.grid.image), positions = p.grid.position_count();
  const int64_t per_group = p.in_channels / p.group, taps = p.grid.kernel_count();
#pragma omp parallel for schedule(static) if (p.batch * p.group * image >= (1 << 14))
  for (int64_t ng = 0; ng < p.batch * p.group; ++ng) {
    std::vector<int32_t> channel_sum(static_cast<size_t>(image), 0);
    const uint8_t* first = x + ng * per_group * image;  // batch n's group g starts there
    for (int64_t c = 0; c < per_group; ++c)
      for (int64_t i = 0; i < image; ++i) channel_sum[static_cast<size_t>(i)] += static_cast<int32_t>(first[c * image + i]) - x_zero;
    int32_t* out = sums + ng * positions;
    std::fill_n(out, positions, 0);
    for (int64_t t = 0; t < taps; ++t)
      ops::for_each_tap(p.grid, t, [&](int64_t pos, int64_t off) { out[pos] += channel_sum[static_cast<size_t>(off)]; });
  }
}

Result<ops::Kernel> build_conv_integer(const ir::Node& node) {
  const std::vector<int64_t> x = input_dims(node, 0), w = input_dims(node, 1), y = output_dims(node, 0);
  KILN_ASSIGN_OR_RETURN(const ops::ConvProblem p, ops::conv_problem(node, x, w, y, false));
  memory::dims pad_right;
  for (size_t i = 0; i < 2; ++i)
    pad_right.push_back(right_padding(x[i + 2], y[i + 2], p.grid.kernel[i], p.grid.strides[i], p.grid.dilations[i], p.grid.pads_begin[i]));
  const int64_t groups = p.group, out_per_group = w[0] / groups, in_per_group = w[1];
  auto dims_of = [&](int64_t outputs) {
    return groups > 1 ? memory::dims{groups, outputs, in_per_group, w[2], w[3]} : memory::dims{outputs, in_per_group, w[2], w[3]};
  };
  // oneDNN's int8 kernels work on channels-last (or blocked) activations: the kernel reorders its
  // input in and its output out, in buffers of its own.
  auto any = [](const std::vector<int64_t>& d, memory::data_type t) { return memory::desc(memory::dims(d.begin(), d.end()), t, memory::format_tag::any); };
  auto plain = [](const std::vector<int64_t>& d, memory::data_type t) { return memory::desc(memory::dims(d.begin(), d.end()), t, memory::format_tag::nchw); };
  auto weights_any = [&](int64_t outputs) { return memory::desc(dims_of(outputs), memory::data_type::s8, memory::format_tag::any); };
  const auto main_pd = int8_conv(any(x, memory::data_type::u8), weights_any(out_per_group), any(y, memory::data_type::s32), p, pad_right);
  const memory::desc src = plain(x, memory::data_type::u8), dst = plain(y, memory::data_type::s32);
  const memory src_inner(main_pd.src_desc(), cpu_engine()), dst_inner(main_pd.dst_desc(), cpu_engine());
  auto reorder = [](const memory::desc& from, const memory::desc& to) {
    return dnnl::reorder(dnnl::reorder::primitive_desc(cpu_engine(), from, cpu_engine(), to));
  };
  const dnnl::reorder src_in = reorder(src, main_pd.src_desc()), dst_out = reorder(main_pd.dst_desc(), dst);
  const dnnl::convolution_forward main(main_pd);
  check_implementation(main);
  KILN_RETURN_IF_ERROR(require_vnni(node, main));
  // Weights as int8 (uint8 shifted by 128) and their zero point shifted alike, per output channel.
  const Tensor& weights = *constant_input(node, 1);
  const bool unsigned_weights = weights.dtype() == DType::kUInt8;
  std::vector<int8_t> shifted(static_cast<size_t>(weights.element_count()));
  for (size_t i = 0; i < shifted.size(); ++i)
    shifted[i] = unsigned_weights ? static_cast<int8_t>(static_cast<int>(weights.data<uint8_t>()[i]) - 128) : weights.data<int8_t>()[i];
  const memory::desc plain_weights(dims_of(out_per_group), memory::data_type::s8, groups > 1 ? memory::format_tag::goihw : memory::format_tag::oihw);
  const memory packed = reorder_to(memory(plain_weights, cpu_engine(), shifted.data()), main_pd.weights_desc());
  std::vector<int32_t> zero_points(static_cast<size_t>(w[0]), 0);
  if (const Tensor* z = node.input(3) ? constant_input(node, 3) : nullptr) {
    if (z->element_count() != 1 && z->element_count() != w[0])
      return invalid_model(node.describe() + ": w_zero_point must hold one value or one per output channel");
    for (int64_t c = 0; c < w[0]; ++c) {
      const int64_t i = z->element_count() == 1 ? 0 : c;
      zero_points[static_cast<size_t>(c)] = unsigned_weights ? static_cast<int32_t>(z->data<uint8_t>()[i]) - 128 : z->data<int8_t>()[i];
    }
  } else if (unsigned_weights) {
    std::fill(zero_points.begin(), zero_points.end(), -128);
  }
  const bool needs_sums = std::any_of(zero_points.begin(), zero_points.end(), [](int32_t z) { return z != 0; });
  auto stream = std::make_shared<dnnl::stream>(cpu_engine());
  const int64_t positions = y[2] * y[3];
  return ops::Kernel([=](ops::KernelContext& ctx) -> Status {
    const Tensor* xz = ctx.input(2);
    if (xz && (xz->element_count() != 1 || xz->dtype() != DType::kUInt8)) return ctx.error("x_zero_point must be one uint8 value");
    int32_t x_zero = xz ? xz->data<uint8_t>()[0] : 0;
    memory zero(memory::desc({1}, memory::data_type::s32, memory::format_tag::x), cpu_engine(), &x_zero);
    int32_t* out = ctx.output(0)->data<int32_t>();
    // The window sums go in the run scratch (as many floats as int32s).
    auto* sums = needs_sums ? reinterpret_cast<int32_t*>(run_scratch_floats(static_cast<size_t>(y[0] * groups * positions))) : nullptr;
    return guard(ctx.node(), [&] {
      src_in.execute(*stream, {{DNNL_ARG_FROM, wrap(src, *ctx.input(0))}, {DNNL_ARG_TO, src_inner}});
      main.execute(*stream, {{DNNL_ARG_SRC, src_inner}, {DNNL_ARG_WEIGHTS, packed}, {DNNL_ARG_DST, dst_inner},
                             {DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, zero}});
      dst_out.execute(*stream, {{DNNL_ARG_FROM, dst_inner}, {DNNL_ARG_TO, memory(dst, cpu_engine(), out)}});
      stream->wait();
      if (!needs_sums) return Status::ok();
      cpu::window_sums(ctx.input(0)->data<uint8_t>(), x_zero, p, sums);
      const int64_t planes = y[0] * w[0];
#pragma omp parallel for schedule(static) if (planes * positions >= (1 << 15))
      for (int64_t plane = 0; plane < planes; ++plane) {
        const int64_t n = plane / w[0], c = plane % w[0];
        const int32_t z = zero_points[static_cast<size_t>(c)];
        const int32_t* s = sums + (n * groups + c / out_per_group) * positions;
        int32_t* o = out + plane * positions;
        for (int64_t i = 0; i < positions; ++i) o[i] -= z * s[i];
      }
      return Status::ok();
    });
  });
}

}  // namespace

void add_quantization_kernels(CpuKernelTable& table) {
  table["DynamicQuantizeLinear"] = node_only(dynamic_quantize_supports, build_dynamic_quantize);
  table["ConvInteger"] = node_only(conv_integer_supports, build_conv_integer);
}

}  // namespace kiln::providers::cpu
