// cpu kernels for quantized convolutions, exact as the reference's: ConvInteger (int32 output) and
// QLinearConv (requantized to uint8 or int8 with ops/quantization.h's arithmetic, so every output
// equals the reference's). Both accumulate on oneDNN's int8 convolution (uint8 or int8
// activations with a run-time zero point; uint8 or int8 constant weights with a per-tensor or
// per-output-channel zero point). oneDNN takes the activations' zero point but only int8 weights
// without one: weights w become w - 128 (uint8) or stay (int8), with a zero point z' = z - 128
// (or z) folded out afterwards:
//   conv(x - xz, w - z) = conv(x - xz, w') - z' * window_sum(x - xz)
// where window_sum, the sum of (x - xz) over a group's channels and a window, is Kiln's own loop
// (channel sums, then the window's taps). All sums are exact in int32. oneDNN's int8 kernels on
// CPUs without VNNI sum pairs of products in 16 bits (vpmaddubsw), which may saturate: there the
// weights are split (split_int8_weights) and two convolutions give 64 * high + low, exactly.
// oneDNN only ever sees uint8 activations: int8 ones become x + 128 (their sign bit flipped) with
// the zero point moved alike, so x - xz is unchanged. oneDNN 2.6's own int8-activation path is not
// exact below VNNI (it halves the weights), which gave wrong sums on AVX2 CPUs.
#include <algorithm>
#include <functional>

#include "kiln/ops/conv.h"
#include "kiln/ops/op_helpers.h"
#include "kiln/ops/quantization.h"
#include "kiln/providers/cpu/cpu_kernels.h"
#include "kiln/providers/cpu/onednn_support.h"
#include "kiln/providers/cpu/onednn_target.h"

namespace kiln::providers::cpu {
namespace {

using dnnl::memory;

// Where a quantized convolution's operands are among its node's inputs.
struct ConvOperands {
  size_t x, x_zero, w, w_zero;
};
constexpr ConvOperands kConvInteger{0, 2, 1, 3};
constexpr ConvOperands kQLinearConv{0, 2, 3, 5};

Capability integer_conv_supports(const ir::Node& node, const ConvOperands& at) {
  const ir::Value* x = node.input(at.x);
  const ir::Value* w = node.input(at.w);
  if (!is_8bit_tensor(x)) return Capability::no(node.op_type + " of activations that are not uint8 or int8");
  if (!w || !w->is_constant() || !is_8bit_tensor(w)) return Capability::no(node.op_type + " with weights computed by the graph");
  if (node.input(at.w_zero) && !node.input(at.w_zero)->is_constant())
    return Capability::no(node.op_type + " with a weight zero point computed by the graph");
  if (!x->type.shape || x->type.shape->rank() != 4) return Capability::no(node.op_type + " over other than 2 spatial axes");
  return Capability::yes();
}

// A oneDNN int8 convolution: u8 or s8 activations with a run-time zero point, s8 weights, s32 output.
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

// sums[n, g, position] = sum over group g's channels and the window at `position` of (x - xz);
// taps outside the image (padding) add nothing.
template <class X>
void window_sums(const X* x, int32_t x_zero, const ops::ConvProblem& p, int32_t* sums) {
  const int64_t image = shape_element_count(p.grid.image), positions = p.grid.position_count();
  const int64_t per_group = p.in_channels / p.group, taps = p.grid.kernel_count();
#pragma omp parallel for schedule(static) if (p.batch * p.group * image >= (1 << 14))
  for (int64_t ng = 0; ng < p.batch * p.group; ++ng) {
    std::vector<int32_t> channel_sum(static_cast<size_t>(image), 0);
    const X* first = x + ng * per_group * image;  // batch n's group g starts there
    for (int64_t c = 0; c < per_group; ++c)
      for (int64_t i = 0; i < image; ++i) channel_sum[static_cast<size_t>(i)] += static_cast<int32_t>(first[c * image + i]) - x_zero;
    int32_t* out = sums + ng * positions;
    std::fill_n(out, positions, 0);
    for (int64_t t = 0; t < taps; ++t)
      ops::for_each_tap(p.grid, t, [&](int64_t pos, int64_t off) { out[pos] += channel_sum[static_cast<size_t>(off)]; });
  }
}

// Computes conv(x - xz, w - wz) of one run into `out` (NCHW int32), using `sums` (as many int32s as
// window_sum_count()) for the weights' zero points.
class IntegerConvolution {
 public:
  static Result<IntegerConvolution> build(const ir::Node& node, KernelBuild& build, const ConvOperands& at);
  int64_t window_sum_count() const { return needs_sums_ ? y_[0] * groups_ * y_[2] * y_[3] : 0; }
  Status accumulate(const ops::KernelContext& ctx, int32_t* out, int32_t* sums) const;

 private:
  ConvOperands at_;
  ops::ConvProblem problem_;
  std::vector<int64_t> y_;
  int64_t groups_ = 1;
  bool signed_x_ = false, needs_sums_ = false;
  memory::desc src_, dst_;
  dnnl::reorder src_in_, dst_out_;
  dnnl::convolution_forward main_;
  memory src_inner_, dst_inner_;
  std::vector<memory> packed_;  // the weights, or their high and low parts (split_int8_weights)
  std::shared_ptr<std::vector<int32_t>> low_part_;  // the low part's result, when split
  std::shared_ptr<std::vector<uint8_t>> flipped_x_;  // int8 activations as uint8 (x + 128)
  std::vector<int32_t> zero_points_;  // the weights', shifted, per output channel
  std::shared_ptr<dnnl::stream> stream_;
};

Result<IntegerConvolution> IntegerConvolution::build(const ir::Node& node, KernelBuild& build, const ConvOperands& at) {
  IntegerConvolution c;
  c.at_ = at;
  const std::vector<int64_t> x = input_dims(node, at.x), w = input_dims(node, at.w);
  c.y_ = output_dims(node, 0);
  KILN_ASSIGN_OR_RETURN(c.problem_, ops::conv_problem(node, x, w, c.y_, false));
  const ops::ConvProblem& p = c.problem_;
  memory::dims pad_right;
  for (size_t i = 0; i < 2; ++i)
    pad_right.push_back(right_padding(x[i + 2], c.y_[i + 2], p.grid.kernel[i], p.grid.strides[i], p.grid.dilations[i], p.grid.pads_begin[i]));
  c.groups_ = p.group;
  const int64_t groups = p.group, out_per_group = w[0] / groups, in_per_group = w[1];
  auto dims_of = [&](int64_t outputs) {
    return groups > 1 ? memory::dims{groups, outputs, in_per_group, w[2], w[3]} : memory::dims{outputs, in_per_group, w[2], w[3]};
  };
  c.signed_x_ = node.input(at.x)->type.dtype == DType::kInt8;
  const memory::data_type x_type = memory::data_type::u8;
  if (c.signed_x_) c.flipped_x_ = std::make_shared<std::vector<uint8_t>>(static_cast<size_t>(shape_element_count(x)));
  // oneDNN's int8 kernels work on channels-last (or blocked) activations: the kernel reorders its
  // input in and its output out, in buffers of its own.
  auto any = [](const std::vector<int64_t>& d, memory::data_type t) { return memory::desc(memory::dims(d.begin(), d.end()), t, memory::format_tag::any); };
  auto plain = [](const std::vector<int64_t>& d, memory::data_type t) { return memory::desc(memory::dims(d.begin(), d.end()), t, memory::format_tag::nchw); };
  const auto main_pd = int8_conv(any(x, x_type), memory::desc(dims_of(out_per_group), memory::data_type::s8, memory::format_tag::any),
                                 any(c.y_, memory::data_type::s32), p, pad_right);
  c.src_ = plain(x, x_type);
  c.dst_ = plain(c.y_, memory::data_type::s32);
  c.src_inner_ = memory(main_pd.src_desc(), cpu_engine());
  c.dst_inner_ = memory(main_pd.dst_desc(), cpu_engine());
  auto reorder = [](const memory::desc& from, const memory::desc& to) {
    return dnnl::reorder(dnnl::reorder::primitive_desc(cpu_engine(), from, cpu_engine(), to));
  };
  c.src_in_ = reorder(c.src_, main_pd.src_desc());
  c.dst_out_ = reorder(main_pd.dst_desc(), c.dst_);
  c.main_ = dnnl::convolution_forward(main_pd);
  check_implementation({node, build}, c.main_);
  // Weights as int8 (uint8 shifted by 128) and their zero point shifted alike, per output channel.
  const Tensor& weights = *constant_input(node, at.w);
  const bool unsigned_weights = weights.dtype() == DType::kUInt8;
  std::vector<int8_t> shifted(static_cast<size_t>(weights.element_count()));
  for (size_t i = 0; i < shifted.size(); ++i)
    shifted[i] = unsigned_weights ? static_cast<int8_t>(static_cast<int>(weights.data<uint8_t>()[i]) - 128) : weights.data<int8_t>()[i];
  const memory::desc plain_weights(dims_of(out_per_group), memory::data_type::s8, groups > 1 ? memory::format_tag::goihw : memory::format_tag::oihw);
  auto pack = [&](std::vector<int8_t>& plain) { return reorder_to(memory(plain_weights, cpu_engine(), plain.data()), main_pd.weights_desc()); };
  if (runs_int8_with_vnni(c.main_)) {
    c.packed_ = {pack(shifted)};
  } else {
    SplitInt8Weights split = split_int8_weights(shifted);
    c.packed_ = {pack(split.high), pack(split.low)};
    c.low_part_ = std::make_shared<std::vector<int32_t>>(static_cast<size_t>(shape_element_count(c.y_)));
  }
  c.zero_points_.assign(static_cast<size_t>(w[0]), unsigned_weights ? -128 : 0);
  if (const Tensor* z = node.input(at.w_zero) ? constant_input(node, at.w_zero) : nullptr) {
    if (z->element_count() != 1 && z->element_count() != w[0])
      return invalid_model(node.describe() + ": w_zero_point must hold one value or one per output channel");
    for (int64_t k = 0; k < w[0]; ++k) {
      const int64_t i = z->element_count() == 1 ? 0 : k;
      c.zero_points_[static_cast<size_t>(k)] =
          unsigned_weights ? static_cast<int32_t>(z->data<uint8_t>()[i]) - 128 : z->data<int8_t>()[i];
    }
  }
  c.needs_sums_ = std::any_of(c.zero_points_.begin(), c.zero_points_.end(), [](int32_t z) { return z != 0; });
  c.stream_ = std::make_shared<dnnl::stream>(cpu_engine());
  return c;
}

Status IntegerConvolution::accumulate(const ops::KernelContext& ctx, int32_t* out, int32_t* sums) const {
  const Tensor* xz = ctx.input(at_.x_zero);
  const DType x_type = ctx.input(at_.x)->dtype();
  if (xz && (xz->element_count() != 1 || xz->dtype() != x_type)) return ctx.error("x_zero_point must be one value of x's type");
  int32_t x_zero = !xz ? 0 : signed_x_ ? xz->data<int8_t>()[0] : xz->data<uint8_t>()[0];
  int32_t unsigned_x_zero = signed_x_ ? x_zero + 128 : x_zero;
  memory zero(memory::desc({1}, memory::data_type::s32, memory::format_tag::x), cpu_engine(), &unsigned_x_zero);
  return guard(ctx.node(), [&] {
    void* x = const_cast<void*>(ctx.input(at_.x)->raw_data());
    if (signed_x_) {
      const auto* from = static_cast<const uint8_t*>(x);
      uint8_t* to = flipped_x_->data();
      const auto count = static_cast<int64_t>(flipped_x_->size());
#pragma omp parallel for schedule(static) if (count >= (1 << 16))
      for (int64_t i = 0; i < count; ++i) to[i] = from[i] ^ 0x80;
      x = to;
    }
    src_in_.execute(*stream_, {{DNNL_ARG_FROM, memory(src_, cpu_engine(), x)}, {DNNL_ARG_TO, src_inner_}});
    for (size_t part = 0; part < packed_.size(); ++part) {
      main_.execute(*stream_, {{DNNL_ARG_SRC, src_inner_}, {DNNL_ARG_WEIGHTS, packed_[part]}, {DNNL_ARG_DST, dst_inner_},
                               {DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, zero}});
      int32_t* target = part == 0 ? out : low_part_->data();
      dst_out_.execute(*stream_, {{DNNL_ARG_FROM, dst_inner_}, {DNNL_ARG_TO, memory(dst_, cpu_engine(), target)}});
    }
    stream_->wait();
    if (low_part_) {
      const int32_t* low = low_part_->data();
      const auto count = static_cast<int64_t>(low_part_->size());
#pragma omp parallel for schedule(static) if (count >= (1 << 15))
      for (int64_t i = 0; i < count; ++i) out[i] = out[i] * 64 + low[i];
    }
    if (!needs_sums_) return Status::ok();
    if (signed_x_) window_sums(ctx.input(at_.x)->data<int8_t>(), x_zero, problem_, sums);
    else window_sums(ctx.input(at_.x)->data<uint8_t>(), x_zero, problem_, sums);
    const int64_t planes = y_[0] * y_[1], positions = y_[2] * y_[3], out_per_group = y_[1] / groups_;
#pragma omp parallel for schedule(static) if (planes * positions >= (1 << 15))
    for (int64_t plane = 0; plane < planes; ++plane) {
      const int64_t n = plane / y_[1], k = plane % y_[1];
      const int32_t z = zero_points_[static_cast<size_t>(k)];
      const int32_t* s = sums + (n * groups_ + k / out_per_group) * positions;
      int32_t* o = out + plane * positions;
      for (int64_t i = 0; i < positions; ++i) o[i] -= z * s[i];
    }
    return Status::ok();
  });
}

Result<ops::Kernel> build_conv_integer(const ir::Node& node, KernelBuild& build) {
  KILN_ASSIGN_OR_RETURN(IntegerConvolution conv, IntegerConvolution::build(node, build, kConvInteger));
  return ops::Kernel([conv = std::move(conv)](ops::KernelContext& ctx) -> Status {
    // The window sums go in the run scratch (as many floats as int32s).
    auto* sums = reinterpret_cast<int32_t*>(run_scratch_floats(static_cast<size_t>(conv.window_sum_count())));
    return conv.accumulate(ctx, ctx.output(0)->data<int32_t>(), sums);
  });
}

Capability qlinear_conv_supports(const ir::Node& node) {
  const Capability conv = integer_conv_supports(node, kQLinearConv);
  if (!conv.supported) return conv;
  if (!is_8bit_tensor(node.input(7))) return Capability::no("QLinearConv whose output type is not uint8 or int8");
  return Capability::yes();
}

// Inputs: x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, B. The
// accumulators (with B) requantize per output channel: saturate(round(acc * x_scale * w_scale[k] /
// y_scale) + y_zero_point).
Result<ops::Kernel> build_qlinear_conv(const ir::Node& node, KernelBuild& build) {
  KILN_ASSIGN_OR_RETURN(IntegerConvolution conv, IntegerConvolution::build(node, build, kQLinearConv));
  const std::vector<int64_t> y = output_dims(node, 0);
  return ops::Kernel([conv = std::move(conv), y](ops::KernelContext& ctx) -> Status {
    const int64_t channels = y[1], positions = shape_element_count(y) / std::max<int64_t>(y[0] * channels, 1);
    KILN_ASSIGN_OR_RETURN(const std::vector<float> x_scale, ops::read_floats(*ctx.input(1), "x_scale"));
    KILN_ASSIGN_OR_RETURN(const std::vector<float> w_scale, ops::read_floats(*ctx.input(4), "w_scale"));
    KILN_ASSIGN_OR_RETURN(const std::vector<float> y_scale, ops::read_floats(*ctx.input(6), "y_scale"));
    const Tensor& y_zero = *ctx.input(7);
    if (x_scale.size() != 1 || y_scale.size() != 1 || y_zero.element_count() != 1)
      return ctx.error("x_scale, y_scale and y_zero_point must hold one value each");
    if (w_scale.size() != 1 && static_cast<int64_t>(w_scale.size()) != channels)
      return ctx.error("w_scale must hold one value or one per output channel");
    const Tensor* bias = ctx.input(8);
    if (bias && (bias->dtype() != DType::kInt32 || bias->element_count() != channels))
      return ctx.error("B must hold one int32 per output channel");
    // Accumulators, then the window sums, in the run scratch (as many floats as int32s).
    const int64_t count = shape_element_count(y);
    auto* acc = reinterpret_cast<int32_t*>(run_scratch_floats(static_cast<size_t>(count + conv.window_sum_count())));
    KILN_RETURN_IF_ERROR(conv.accumulate(ctx, acc, acc + count));
    std::vector<float> multiplier(static_cast<size_t>(channels));
    for (int64_t k = 0; k < channels; ++k)
      multiplier[static_cast<size_t>(k)] = ops::requant_multiplier(x_scale[0], w_scale[w_scale.size() == 1 ? 0 : static_cast<size_t>(k)], y_scale[0]);
    Tensor& out = *ctx.output(0);
    ops::dispatch<ops::TypeList<uint8_t, int8_t>>(out.dtype(), [&]<class Q>() {
      const int64_t zero = y_zero.dtype() == DType::kInt8 ? y_zero.data<int8_t>()[0] : y_zero.data<uint8_t>()[0];
      Q* o = out.data<Q>();
      const int64_t planes = y[0] * channels;
#pragma omp parallel for schedule(static) if (count >= (1 << 15))
      for (int64_t plane = 0; plane < planes; ++plane) {
        const int64_t k = plane % channels;
        const int64_t b = bias ? bias->data<int32_t>()[k] : 0;
        const float m = multiplier[static_cast<size_t>(k)];
        for (int64_t i = plane * positions; i < (plane + 1) * positions; ++i) o[i] = ops::requantize<Q>(acc[i] + b, m, zero);
      }
    });
    return Status::ok();
  });
}

}  // namespace

void add_integer_conv_kernels(CpuKernelTable& table) {
  table["ConvInteger"] = CpuKernel{[](const ir::Node& n) { return integer_conv_supports(n, kConvInteger); }, build_conv_integer};
  table["QLinearConv"] = CpuKernel{qlinear_conv_supports, build_qlinear_conv};
}

}  // namespace kiln::providers::cpu
