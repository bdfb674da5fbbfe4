// cpu kernels for Conv and kiln.FusedConv: one oneDNN convolution primitive per node and plan,
// built for the plan's concrete shapes, with constant weights reordered once into the layout the
// primitive prefers. FusedConv's residual and activation run as post-ops (epilogue.h); its NHWC
// activation layouts (ops/activation_layout.h) map to oneDNN's channels-last and blocked tensors. A
// FusedConv marked algorithm = "winograd" (passes/winograd_selection.h) runs oneDNN's Winograd
// convolution, which works on the blocked layout nChw16c: activations in another layout are
// reordered into and out of it at the kernel's edges, through one per-thread workspace; when
// oneDNN declines it, the direct method runs. Which of the two runs a marked convolution is a
// tactic: measured by the plan's tuner when the session tunes (providers/tuning.h), else decided
// by winograd_pays. A convolution oneDNN runs only with its reference code in the stored layout
// (dilated in NCHW8c on AVX2) runs in channels-last or channels-first instead, reordered the same
// way. A node marked bfloat16 (ops/numeric_precision.h) packs its weights as bfloat16 and converts
// its input on each run, accumulating and writing float32 (never by Winograd: oneDNN has no
// bfloat16 Winograd convolution); an input or output kept bfloat16 between bf16 products
// (ops::kOutputDtypeAttribute) it reads or writes as it is. A node marked int8 packs its weights
// as int8 (symmetric per output channel, weight_scales) and quantizes its input on each run per
// tensor to uint8 (product_precision.h: Int8Product), the weight scales fixed in the primitive and
// the input's scale a first post-op; an input or output kept uint8 between int8 products it reads
// or writes as it is (the output quantized by the epilogue's last post-op); oneDNN 2.6 runs int8 convolutions in blocked layouts with its
// reference code only, so those read and write channels-last, reordered at the kernel's edges.
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <limits>
#include <memory>
#include <new>
#include <optional>

#include "kiln/ir/buffer.h"
#include "kiln/ops/activation.h"
#include "kiln/ops/conv.h"
#include "kiln/providers/cpu/cpu_kernels.h"
#include "kiln/providers/cpu/epilogue.h"
#include "kiln/providers/cpu/onednn_support.h"
#include "kiln/providers/cpu/onednn_target.h"
#include "kiln/providers/cpu/product_precision.h"
#include "kiln/providers/tuning.h"

namespace kiln::providers::cpu {
namespace {

using dnnl::memory;

Capability conv_supports(const ir::Node& node) {
  if (node.inputs.size() < 2) return Capability::no("Conv needs X and W");
  Capability c = product_tensors(node, {0, 1, 2, kResidualInput});
  if (!c.supported) return c;
  const size_t rank = node.inputs[0]->type.shape->rank();
  if (rank < 3 || rank > 5) return Capability::no("Conv over " + std::to_string(rank - 2) + " spatial axes (cpu has 1 to 3)");
  return epilogue_supported(node);
}

// Everything a oneDNN convolution descriptor needs besides the activation layouts.
struct ConvGeometry {
  memory::dims strides, dilations, pad_left, pad_right;
  memory::desc weights_any, bias;
  bool has_bias = false;
  ops::Precision precision = ops::Precision::kFp32;  // the input's and weights' (node_precision)
  const Int8Product* int8 = nullptr;                   // int8: its scales and zero point's attributes
};

dnnl::convolution_forward::primitive_desc primitive_desc(const ir::Node& node, const ConvGeometry& g, dnnl::algorithm algorithm,
                                                         const memory::desc& src, const memory::desc& dst) {
  const memory::desc src_read = product_activation_desc(src, g.precision);
  const auto desc = g.has_bias ? dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference, algorithm, src_read,
                                                                 g.weights_any, g.bias, dst, g.strides, g.dilations, g.pad_left,
                                                                 g.pad_right)
                               : dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference, algorithm, src_read,
                                                                 g.weights_any, dst, g.strides, g.dilations, g.pad_left, g.pad_right);
  dnnl::primitive_attr attr = g.int8 ? epilogue_attr(node, g.int8->first_post_ops(src.dims().size())) : epilogue_attr(node);
  if (g.int8) g.int8->add_attributes(attr, 1 << 1);  // the output channels
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return {desc, attr, cpu_engine()};
}

// The Winograd primitive on nChw16c activations of these channels-first dims, when oneDNN has one.
std::optional<dnnl::convolution_forward::primitive_desc> winograd_desc(const ir::Node& node, const ConvGeometry& g,
                                                                       const std::vector<int64_t>& x, const std::vector<int64_t>& y) {
  const memory::desc src(memory::dims(x.begin(), x.end()), memory::data_type::f32, memory::format_tag::nChw16c);
  const memory::desc dst(memory::dims(y.begin(), y.end()), memory::data_type::f32, memory::format_tag::nChw16c);
  try {
    return primitive_desc(node, g, dnnl::algorithm::convolution_winograd, src, dst);
  } catch (const dnnl::error&) {
    return std::nullopt;
  }
}

// Winograd's input and output transforms pay for themselves only with enough multiply-adds per
// thread: N * OH * OW * C_in * C_out / threads of at least this (measured with oneDNN 2.6 on
// AVX-512: SqueezeNet's layers, about 3M each at batch 1, run faster by Winograd on one thread and
// slower split over two; ResNet-50's, about 12M each, run about 1.5x faster from batch 1 on).
constexpr int64_t kWinogradMinWorkPerThread = int64_t{2} << 20;
// With few input channels the transforms (and the reorders to nChw16c) cost as much as the
// product saves: SqueezeNet's 16-channel expand3x3 layers ran 1.7x slower by Winograd at batch 8
// (equal at batch 1); its 32- and 64-channel ones 10-15% faster.
constexpr int64_t kWinogradMinInputChannels = 32;
// Winograd's transformed weights are 16/9 the size of the plain ones and stream from memory once
// per run: with few output pixels (N * OH * OW) that traffic outweighs the saved products
// (ResNet-50's 7x7 layers at batch 1: 49 pixels, 17 MiB of transformed weights each).
constexpr int64_t kWinogradMinOutputPixels = 64;

bool winograd_pays(const std::vector<int64_t>& y, int64_t in_channels) {
  const int64_t threads = std::max(1, omp_get_max_threads());
  const int64_t pixels = y[0] * y[2] * y[3];
  return in_channels >= kWinogradMinInputChannels && pixels >= kWinogradMinOutputPixels &&
         pixels * in_channels * y[1] / threads >= kWinogradMinWorkPerThread;
}


// A grow-only, 64-byte aligned buffer per thread: the blocked copies of a Winograd convolution's
// input and output live there while the kernel runs (kernels of one thread run one at a time).
float* blocked_workspace(size_t bytes) {
  struct Buffer {
    std::unique_ptr<float, decltype(&std::free)> data{nullptr, &std::free};
    size_t bytes = 0;
  };
  thread_local Buffer buffer;
  if (buffer.bytes < bytes) {
    const size_t rounded = (bytes + 63) / 64 * 64;
    buffer.data.reset(static_cast<float*>(std::aligned_alloc(64, rounded)));
    if (!buffer.data) throw std::bad_alloc();
    buffer.bytes = rounded;
  }
  return buffer.data.get();
}

struct ConvKernelState {
  dnnl::convolution_forward primitive;
  memory::desc src, dst, bias;
  memory::desc src_read;           // what the primitive reads: src, or its copy in another layout or type
  InputConversion src_conversion;  // src (int8: quantized, in its own layout) into src_read
  Int8Product int8;                // int8: src quantized, and the run's scales
  PrimitiveWeights weights;
  memory scratchpad;                     // the primitive's own work space, allocated once
  std::shared_ptr<void> scratchpad_storage;  // from allocate_buffer: charged to the session's budget
  bool has_bias = false;
  bool has_residual = false;  // a sum post-op: the primitive adds to what its destination holds
  // A primitive writing another layout than the stored one (Winograd's nChw16c, or a layout oneDNN
  // has a vector kernel in for this convolution): that layout, and the reorders from it (and to it
  // for a residual). The input's reorder to such a layout is src_conversion.
  std::optional<memory::desc> dst_blocked;
  dnnl::reorder from_blocked, residual_to_blocked;
  dnnl::stream stream{cpu_engine()};
  PrimitiveArgs args;  // the arguments of the last run

  // The primitive of `pd`, its scratchpad, and for activations in a layout or type it does not
  // read or write as stored (a Winograd primitive's nChw16c, a bfloat16 input), the conversions.
  void set_primitive(const dnnl::convolution_forward::primitive_desc& pd) {
    primitive = dnnl::convolution_forward(pd);
    scratchpad_storage = allocate_buffer(pd.scratchpad_desc().get_size());
    if (!scratchpad_storage) throw std::bad_alloc();  // an AllocationFailure at the session's load or run
    scratchpad = memory(pd.scratchpad_desc(), cpu_engine(), scratchpad_storage.get());
    src_read = pd.src_desc();
    src_conversion = InputConversion(int8.active() ? with_data_type(src, memory::data_type::u8) : src, src_read);
    if (pd.dst_desc() == dst) return;
    dst_blocked = pd.dst_desc();
    from_blocked = dnnl::reorder(memory(*dst_blocked, cpu_engine(), nullptr), memory(dst, cpu_engine(), nullptr));
    if (has_residual)
      residual_to_blocked = dnnl::reorder(memory(dst, cpu_engine(), nullptr), memory(*dst_blocked, cpu_engine(), nullptr));
  }

  // Runs the primitive on args whose source is src_read already, writing dst through the blocked
  // layout where the primitive writes one.
  void execute(const std::unordered_map<int, memory>& args) {
    if (!dst_blocked) {
      primitive.execute(stream, args);
      return;
    }
    std::unordered_map<int, memory> blocked_args = args;
    memory dst = args.at(DNNL_ARG_DST);
    memory dst_b(*dst_blocked, cpu_engine(), blocked_workspace(dst_blocked->get_size()));
    if (has_residual) residual_to_blocked.execute(stream, dst, dst_b);
    blocked_args[DNNL_ARG_DST] = dst_b;
    primitive.execute(stream, blocked_args);
    from_blocked.execute(stream, dst_b, dst);
  }
};

// The best of a few runs of the convolution `state` (its primitive set), in ms, on buffers of its
// shapes filled with a constant (the time does not depend on the values): how the tuner times a
// candidate, reorders included.
Result<double> time_convolution(ConvKernelState& state, const memory::desc& weights) {
  memory src(state.src, cpu_engine()), dst(state.dst, cpu_engine()), w(weights, cpu_engine()), bias(state.bias, cpu_engine());
  for (memory* m : {&src, &w, &bias}) {
    float* data = static_cast<float*>(m->get_data_handle());
    std::fill(data, data + m->get_desc().get_size() / sizeof(float), 0.01f);
  }
  const memory src_read(state.src_read, cpu_engine(), const_cast<void*>(state.src_conversion.data_for_run(src.get_data_handle(), state.stream)));
  std::unordered_map<int, memory> args{{DNNL_ARG_SRC, src_read}, {DNNL_ARG_WEIGHTS, w}, {DNNL_ARG_DST, dst}, {DNNL_ARG_SCRATCHPAD, state.scratchpad}};
  if (state.has_bias) args.emplace(DNNL_ARG_BIAS, bias);
  double best = std::numeric_limits<double>::infinity();
  for (int run = 0; run < 4; ++run) {  // the first warms caches and oneDNN's lazy setup
    const auto start = std::chrono::steady_clock::now();
    state.execute(args);
    state.stream.wait();
    if (run > 0) best = std::min(best, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  return best;
}

// The direct primitive on the stored layouts; where oneDNN has only its reference code for them
// (a dilated convolution in NCHW8c on AVX2), the first of channels-last and channels-first it runs
// with a vector or gemm kernel, the activations reordered at the kernel's edges.
dnnl::convolution_forward::primitive_desc vector_direct_desc(const ir::Node& node, const ConvGeometry& g,
                                                             const std::vector<int64_t>& x, const std::vector<int64_t>& y,
                                                             const ConvKernelState& layouts) {
  const auto stored = primitive_desc(node, g, dnnl::algorithm::convolution_direct, layouts.src, layouts.dst);
  if (!is_reference_implementation(stored.impl_info_str())) return stored;
  using tag = memory::format_tag;
  const size_t rank = x.size();
  for (const tag t : {rank == 3 ? tag::nwc : rank == 4 ? tag::nhwc : tag::ndhwc, rank == 3 ? tag::ncw : rank == 4 ? tag::nchw : tag::ncdhw}) {
    const memory::desc src(memory::dims(x.begin(), x.end()), memory::data_type::f32, t);  // converted to g.precision's type
    const memory::desc dst(memory::dims(y.begin(), y.end()), layouts.dst.data_type(), t);
    const auto other = primitive_desc(node, g, dnnl::algorithm::convolution_direct, src, dst);
    if (!is_reference_implementation(other.impl_info_str())) return other;
  }
  return stored;  // check_implementation then names the node
}

// What a tuned convolution's timing depends on: shapes, layouts, attributes, threads.
std::string conv_problem(const ir::Node& node, const std::vector<int64_t>& x, const std::vector<int64_t>& w,
                         const std::vector<int64_t>& y) {
  std::string text = "Conv x" + shape_to_string(x) + " w" + shape_to_string(w) + " y" + shape_to_string(y);
  for (const char* attribute : {"layout", "input_layout", "activation"}) text += " " + node.attr_string(attribute, "-");
  for (const char* attribute : {"strides", "pads", "dilations"}) text += " " + shape_to_string(node.attr_ints(attribute, {}));
  return text + " group " + std::to_string(node.attr_int("group", 1)) + " bias " + (node.input(2) ? "1" : "0") +
         " threads " + std::to_string(omp_get_max_threads()) + "; " + onednn_version();
}

// The primitive descriptor the kernel runs: direct, or for a FusedConv marked Winograd that oneDNN
// runs by Winograd, whichever the tuner measures faster (or, untuned, winograd_pays says).
dnnl::convolution_forward::primitive_desc chosen_algorithm(const ir::Node& node, const ConvGeometry& g, const std::vector<int64_t>& x,
                                                           const std::vector<int64_t>& w, const std::vector<int64_t>& y,
                                                           const ConvKernelState& layouts, KernelBuild& build) {
  const auto direct = vector_direct_desc(node, g, x, y, layouts);
  const bool marked = node.attr_string("algorithm", "direct") == "winograd" && y.size() == 4 && g.precision == ops::Precision::kFp32;
  const std::optional<dnnl::convolution_forward::primitive_desc> winograd = marked ? winograd_desc(node, g, x, y) : std::nullopt;
  if (!winograd) return direct;
  const std::string heuristic = winograd_pays(y, x[1]) ? "winograd" : "direct";
  if (!build.context.tuner()) return heuristic == "winograd" ? *winograd : direct;
  auto candidate = [&](const std::string& name, const dnnl::convolution_forward::primitive_desc& pd) {
    return TacticCandidate{name, [&layouts, &pd]() -> Result<double> {
                             ConvKernelState trial;
                             trial.src = layouts.src;
                             trial.dst = layouts.dst;
                             trial.bias = layouts.bias;
                             trial.has_bias = layouts.has_bias;
                             trial.set_primitive(pd);
                             return time_convolution(trial, pd.weights_desc());
                           }};
  };
  const std::string chosen = build.context.tuner()->choose(node.name, conv_problem(node, x, w, y),
                                                   {candidate("direct", direct), candidate("winograd", *winograd)}, heuristic);
  return chosen == "winograd" ? *winograd : direct;
}

Result<ops::Kernel> build_conv(const ir::Node& node, KernelBuild& build) {
  KILN_ASSIGN_OR_RETURN(const ops::ConvLayouts layouts, ops::conv_layouts(node));
  auto state = std::make_shared<ConvKernelState>();
  KILN_ASSIGN_OR_RETURN(const memory::desc src, activation_desc(input_dims(node, 0), layouts.input));
  KILN_ASSIGN_OR_RETURN(const memory::desc dst, activation_desc(output_dims(node, 0), layouts.output));
  state->src = in_stored_type(src, *node.inputs[0]);
  state->dst = in_stored_type(dst, *node.outputs[0]);
  const std::vector<int64_t> x = ops::channels_first_dims(input_dims(node, 0), layouts.input), w = input_dims(node, 1),
                             y = ops::channels_first_dims(output_dims(node, 0), layouts.output);
  KILN_ASSIGN_OR_RETURN(const ops::ConvProblem p, ops::conv_problem(node, x, w, y, false));
  const size_t spatial = x.size() - 2;
  ConvGeometry g;
  for (size_t i = 0; i < spatial; ++i) {
    g.strides.push_back(p.grid.strides[i]);
    g.dilations.push_back(p.grid.dilations[i] - 1);  // oneDNN counts dilation from 0
    g.pad_left.push_back(p.grid.pads_begin[i]);
    g.pad_right.push_back(right_padding(x[i + 2], y[i + 2], p.grid.kernel[i], p.grid.strides[i], p.grid.dilations[i],
                                        p.grid.pads_begin[i]));
  }
  std::vector<int64_t> weight_dims = w;
  if (p.group > 1) {
    weight_dims = {p.group, w[0] / p.group};
    weight_dims.insert(weight_dims.end(), w.begin() + 1, w.end());
  }
  g.has_bias = node.input(2) != nullptr;
  g.bias = row_major_desc({p.out_channels});
  g.precision = constant_input(node, 1) ? ops::node_precision(node) : ops::Precision::kFp32;
  std::optional<PrimitiveWeights::Quantization> quantization;
  if (g.precision == ops::Precision::kInt8) {
    state->int8 = Int8Product(node, Int8Product::first_form(node));
    g.int8 = &state->int8;
    quantization = PrimitiveWeights::Quantization{ops::weight_channel_axis(node), state->int8.weight_scales()};
  }
  g.weights_any =
      memory::desc(memory::dims(weight_dims.begin(), weight_dims.end()), product_data_type(g.precision), memory::format_tag::any);

  const memory::desc weights_plain = row_major_desc(weight_dims);
  state->has_bias = g.has_bias;
  state->has_residual = node.input(kResidualInput) != nullptr;
  state->bias = g.bias;
  const dnnl::convolution_forward::primitive_desc pd = chosen_algorithm(node, g, x, w, y, *state, build);
  state->set_primitive(pd);
  build.evidence.record_activation_reorders(int(state->src_conversion.active()) + int(state->dst_blocked.has_value()));
  check_implementation({node, build}, state->primitive);
  state->weights = PrimitiveWeights(node, 1, weights_plain, pd, build, quantization);
  return ops::Kernel([state](ops::KernelContext& ctx) {
    return guard(ctx.node(), [&] {
      PrimitiveArgs& args = state->args;
      const void* src = ctx.input(0)->raw_data();
      // int8 activations are channels-last (CpuProvider::graph_preferences): the storage is the tensor.
      if (state->int8.active())
        src = state->int8.quantize(src, ctx.input(0)->element_count(), args);
      args.set(DNNL_ARG_SRC, state->src_read, state->src_conversion.data_for_run(src, state->stream));
      args.set(DNNL_ARG_WEIGHTS, state->weights.for_run(ctx));
      args.set(DNNL_ARG_DST, state->dst, *ctx.output(0));
      args.set(DNNL_ARG_SCRATCHPAD, state->scratchpad);
      if (state->has_bias) {
        const float* bias = ctx.input(2)->data<float>();
        args.set(DNNL_ARG_BIAS, state->bias, state->int8.active() ? state->int8.prescaled_bias(bias) : bias);
      }
      KILN_RETURN_IF_ERROR(prepare_residual(ctx));
      state->execute(args.map());
      state->stream.wait();
      return Status::ok();
    });
  });
}

}  // namespace

void add_conv_kernels(CpuKernelTable& table) {
  table["Conv"] = {conv_supports, build_conv};
  table["kiln.FusedConv"] = {conv_supports, build_conv};
}

}  // namespace kiln::providers::cpu
