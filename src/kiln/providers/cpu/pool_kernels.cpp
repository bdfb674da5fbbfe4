// cpu kernels for pooling: MaxPool (without the indices output), AveragePool and the global forms
// as oneDNN pooling primitives built for the plan's shapes, channels-first, or in the activation
// layout of the kiln.InLayout that wraps them; there max pooling also over uint8 and bfloat16
// (values kept so between reduced products pass through it as they are). Dilated windows (MaxPool,
// AveragePool-19) and 1-D channels-first maps, which oneDNN 2.6 pools only in its reference or
// simple kernels, run Kiln's own loop: the window taps listed once per plan, the planes spread
// over threads, channels-first, in float32.
#include <algorithm>
#include <limits>
#include <memory>
#include <set>

#include "kiln/ops/activation.h"
#include "kiln/ops/spatial_geometry.h"
#include "kiln/providers/cpu/cpu_kernels.h"
#include "kiln/providers/cpu/onednn_support.h"
#include "kiln/providers/cpu/product_precision.h"

namespace kiln::providers::cpu {
namespace {

using dnnl::memory;

bool is_wrapped(const ir::Node& node) { return node.domain == "kiln"; }
// The pooling op: the node's own, or the one kiln.InLayout wraps.
std::string pool_op(const ir::Node& node) { return is_wrapped(node) ? node.attr_string("op") : node.op_type; }
bool is_global(const ir::Node& node) { return pool_op(node).rfind("Global", 0) == 0; }
bool is_dilated(const ir::Node& node) {
  const std::vector<int64_t> d = node.attr_ints("dilations");
  return std::any_of(d.begin(), d.end(), [](int64_t v) { return v != 1; });
}

bool is_max(const ir::Node& node) { return pool_op(node) == "MaxPool" || pool_op(node) == "GlobalMaxPool"; }
bool has_indices(const ir::Node& node) { return node.outputs.size() > 1 && node.outputs[1]; }
// Kiln's own loop pools these (float32 only): dilated windows, and 1-D channels-first maps (oneDNN
// 2.6 pools those only in its simple, scalar, kernel).
bool runs_tap_loop(const ir::Node& node, size_t spatial, const ops::ActivationLayout& layout) {
  if (is_global(node)) return false;
  return is_dilated(node) || (spatial == 1 && layout == ops::ActivationLayout::channels_first());
}

Capability pool_supports(const ir::Node& node) {
  static const std::set<std::string> pools = {"MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool"};
  if (!pools.count(pool_op(node))) return Capability::no("kiln.InLayout of " + pool_op(node) + " has no cpu kernel");
  if (has_indices(node)) return Capability::no("MaxPool's Indices output");
  // Max pooling in uint8 and bfloat16 (a value kept so between reduced products) where oneDNN has
  // a vector kernel for them; a quantized model's own uint8 pools (channels-first) stay cpu_ref's.
  const DType type = node.inputs[0] ? node.inputs[0]->type.dtype : DType::kFloat;
  const bool stored_max = (type == DType::kUInt8 || type == DType::kBFloat16) && max_pools_stored_type(node);
  Capability c = stored_max ? Capability::yes() : float_tensors(node, {0});
  if (!c.supported) return c;
  const size_t rank = node.inputs[0]->type.shape->rank();
  if (rank < 3 || rank > 5) return Capability::no("pooling over " + std::to_string(rank - 2) + " spatial axes (cpu has 1 to 3)");
  if (pool_op(node) == "AveragePool" && node.attr_int("ceil_mode", 0) && node.attr_int("count_include_pad", 0))
    return Capability::no("AveragePool with ceil_mode and count_include_pad");
  if (is_wrapped(node) && is_dilated(node)) return Capability::no("dilated pooling in a blocked layout");
  return Capability::yes();
}

// Kiln's loop for dilated windows and 1-D maps: for every tap of the window, the (position, input
// offset) pairs inside the image; per position the divisor of the average.
Result<ops::Kernel> build_tap_pool(const ir::Node& node, const std::vector<int64_t>& x, const std::vector<int64_t>& y,
                                       const ops::WindowAttrs& w) {
  const size_t spatial = x.size() - 2;
  ops::TapGrid grid;
  grid.image.assign(x.begin() + 2, x.end());
  grid.positions.assign(y.begin() + 2, y.end());
  grid.kernel = w.kernel;
  grid.strides = w.strides;
  grid.dilations = w.dilations;
  grid.pads_begin.assign(w.pads.begin(), w.pads.begin() + static_cast<std::ptrdiff_t>(spatial));
  const int64_t positions = grid.position_count(), image = shape_element_count(grid.image);
  std::vector<std::pair<int64_t, int64_t>> taps;
  std::vector<float> inside(static_cast<size_t>(positions), 0.0f);
  for (int64_t t = 0; t < grid.kernel_count(); ++t)
    ops::for_each_tap(grid, t, [&](int64_t pos, int64_t off) {
      taps.emplace_back(pos, off);
      inside[static_cast<size_t>(pos)] += 1;
    });
  const bool max = pool_op(node) == "MaxPool";
  std::vector<float> divisor = inside;
  if (!max && node.attr_int("count_include_pad", 0)) {  // taps inside the image grown by the pads
    ops::TapGrid padded = grid;
    for (size_t d = 0; d < spatial; ++d) {
      padded.image[d] += w.pads[d] + w.pads[spatial + d];
      padded.pads_begin[d] = 0;
    }
    std::fill(divisor.begin(), divisor.end(), 0.0f);
    for (int64_t t = 0; t < padded.kernel_count(); ++t)
      ops::for_each_tap(padded, t, [&](int64_t pos, int64_t) { divisor[static_cast<size_t>(pos)] += 1; });
  }
  const int64_t planes = x[0] * x[1];
  return ops::Kernel([=](ops::KernelContext& ctx) -> Status {
    const float* in = ctx.input(0)->data<float>();
    float* out = ctx.output(0)->data<float>();
#pragma omp parallel for schedule(static) if (planes * static_cast<int64_t>(taps.size()) >= (1 << 14))
    for (int64_t plane = 0; plane < planes; ++plane) {
      const float* src = in + plane * image;
      float* dst = out + plane * positions;
      std::fill_n(dst, positions, max ? -std::numeric_limits<float>::infinity() : 0.0f);
      for (const auto& [pos, off] : taps) dst[pos] = max ? std::max(dst[pos], src[off]) : dst[pos] + src[off];
      for (int64_t pos = 0; pos < positions; ++pos) {
        const float n = divisor[static_cast<size_t>(pos)];
        if (inside[static_cast<size_t>(pos)] == 0) dst[pos] = 0.0f;  // a window entirely in the padding
        else if (!max) dst[pos] /= n;
      }
    }
    return Status::ok();
  });
}

dnnl::algorithm algorithm_for(const ir::Node& node) {
  if (is_max(node)) return dnnl::algorithm::pooling_max;
  return node.attr_int("count_include_pad", 0) ? dnnl::algorithm::pooling_avg_include_padding
                                               : dnnl::algorithm::pooling_avg_exclude_padding;
}

Result<ops::Kernel> build_pool(const ir::Node& node, KernelBuild& build) {
  KILN_ASSIGN_OR_RETURN(const ops::ActivationLayout layout,
                        is_wrapped(node) ? ops::layout_attribute(node, "layout") : ops::ActivationLayout::channels_first());
  KILN_ASSIGN_OR_RETURN(const memory::desc src_float, activation_desc(input_dims(node, 0), layout));
  KILN_ASSIGN_OR_RETURN(const memory::desc dst_float, activation_desc(output_dims(node, 0), layout));
  const memory::desc src = in_stored_type(src_float, *node.inputs[0]), dst = in_stored_type(dst_float, *node.outputs[0]);
  const std::vector<int64_t> x = ops::channels_first_dims(input_dims(node, 0), layout),
                             y = ops::channels_first_dims(output_dims(node, 0), layout);
  const size_t spatial = x.size() - 2;
  std::vector<int64_t> kernel(x.begin() + 2, x.end());
  if (!is_global(node)) kernel = node.attr_ints("kernel_shape");
  KILN_ASSIGN_OR_RETURN(ops::WindowAttrs w, ops::read_window_attrs(node, kernel));
  if (is_global(node)) w.pads.assign(2 * spatial, 0);
  if (src.data_type() != dst.data_type() || (src.data_type() != memory::data_type::f32 && !max_pools_stored_type(node)))
    return invalid_model(node.describe() + ": pools " + dtype_name(node.inputs[0]->type.dtype) + " into " +
                         dtype_name(node.outputs[0]->type.dtype) + "; only a max pool passes a reduced type through");
  if (runs_tap_loop(node, spatial, layout)) {
    for (size_t i = 0; i < spatial; ++i) KILN_RETURN_IF_ERROR(ops::window_output_size(w, i, x[i + 2], node).status());
    return build_tap_pool(node, x, y, w);
  }
  memory::dims strides, dilations, pad_left, pad_right;
  for (size_t i = 0; i < spatial; ++i) {
    KILN_RETURN_IF_ERROR(ops::window_output_size(w, i, x[i + 2], node).status());  // resolves auto_pad
    const int64_t extent = (w.kernel[i] - 1) * w.dilations[i] + 1;
    strides.push_back(w.strides[i]);
    dilations.push_back(w.dilations[i] - 1);
    pad_left.push_back(w.pads[i]);
    // Past the input by as much as the last window needs (ceil_mode windows may overhang).
    pad_right.push_back(std::max<int64_t>(0, (y[i + 2] - 1) * w.strides[i] + extent - x[i + 2] - w.pads[i]));
  }
  const dnnl::pooling_v2_forward::desc desc(dnnl::prop_kind::forward_inference, algorithm_for(node), src, dst,
                                            strides, memory::dims(kernel.begin(), kernel.end()), dilations, pad_left,
                                            pad_right);
  return primitive_kernel({node, build}, dnnl::pooling_v2_forward(dnnl::pooling_v2_forward::primitive_desc(desc, cpu_engine())),
                          [src, dst](ops::KernelContext& ctx, PrimitiveArgs& args) {
                            args.set(DNNL_ARG_SRC, src, *ctx.input(0));
                            args.set(DNNL_ARG_DST, dst, *ctx.output(0));
                          });
}

}  // namespace

bool max_pools_stored_type(const ir::Node& node) {
  if (!node.is("kiln", "InLayout") || !is_max(node) || has_indices(node) || ops::fused_activation(node) || !node.inputs[0] ||
      !node.inputs[0]->type.shape)
    return false;
  // oneDNN 2.6 pools uint8 channels-first only in its reference code.
  const Result<ops::ActivationLayout> layout = ops::layout_attribute(node, "layout");
  return layout.is_ok() && layout.value() != ops::ActivationLayout::channels_first() &&
         !runs_tap_loop(node, node.inputs[0]->type.shape->rank() - 2, layout.value());
}

void add_pool_kernels(CpuKernelTable& table) {
  for (const char* op : {"MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool", "kiln.InLayout"})
    table[op] = CpuKernel{pool_supports, build_pool};
}

}  // namespace kiln::providers::cpu
