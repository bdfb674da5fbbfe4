// Op family conv: Conv and ConvTranspose (1-D to 3-D, groups, strides, dilations, pads, auto_pad),
// and Col2Im (opset 18), the sum of sliding blocks back into an image. Conv is im2col + a
// cache-blocked GEMM; ConvTranspose is a GEMM + col2im. Half types compute in float, double in
// double; the loops run in parallel with OpenMP.
#include <algorithm>

#include "kiln/ops/conv.h"
#include "kiln/ops/data_movement.h"
#include "kiln/ops/op_families.h"
#include "kiln/ops/op_helpers.h"
#include "kiln/ops/op_registry.h"
#include "kiln/ops/spatial_geometry.h"

namespace kiln::ops {
namespace {

// ---- shape rules ----

// Kernel dims: the kernel_shape attribute, else W's spatial dims; empty when neither is known.
Result<std::vector<int64_t>> kernel_dims(const ir::Node& node, const std::optional<ir::Shape>& w, size_t spatial) {
  if (node.has_attr("kernel_shape")) {
    std::vector<int64_t> k = node.attr_ints("kernel_shape");
    if (k.size() != spatial)
      return invalid_model(node.describe() + ": kernel_shape has " + std::to_string(k.size()) + " dims for " +
                           std::to_string(spatial) + " spatial axes");
    return k;
  }
  std::vector<int64_t> k;
  if (!w) return k;
  for (size_t d = 2; d < w->rank(); ++d) {
    if (!(*w)[d].is_static()) return std::vector<int64_t>();
    k.push_back((*w)[d].value());
  }
  return k;
}

// Checks X and W ranks, group and channel counts; returns the output channel count (maybe unknown).
Result<ir::Dim> check_conv_operands(const InferenceContext& ctx, const ConvInputs& in, bool transposed) {
  const auto& x = ctx.input_type(in.x).shape;
  const auto& w = ctx.input_type(in.w).shape;
  const int64_t group = ctx.node().attr_int("group", 1);
  if (group <= 0) return ctx.error("group must be positive");
  if (x && x->rank() < 3) return ctx.error("input must have rank >= 3 (N, C, spatial...), got " + x->to_string());
  if (x && w && w->rank() != x->rank()) return ctx.error("weights " + w->to_string() + " and input " + x->to_string() + " differ in rank");
  if (!w || w->rank() < 2) return ir::Dim::unknown();
  const ir::Dim& c = x ? (*x)[1] : ir::Dim::unknown();
  // Conv: W is [M, C/group, k...]; ConvTranspose: W is [C, M/group, k...].
  const ir::Dim& w_in = transposed ? (*w)[0] : (*w)[1];
  const int64_t in_factor = transposed ? 1 : group;
  if (c.is_static() && w_in.is_static() && c.value() != w_in.value() * in_factor)
    return ctx.error("input has " + c.to_string() + " channels but weights " + w->to_string() + " with group " +
                     std::to_string(group) + " expect " + std::to_string(w_in.value() * in_factor));
  if (transposed) {
    if ((*w)[0].is_static() && (*w)[0].value() % group != 0) return ctx.error("weight dim 0 is not divisible by group");
    return (*w)[1].is_static() ? ir::Dim((*w)[1].value() * group) : ir::Dim::unknown();
  }
  if ((*w)[0].is_static() && (*w)[0].value() % group != 0) return ctx.error("output channels are not divisible by group");
  return (*w)[0];
}

Status check_bias(const InferenceContext& ctx, const ConvInputs& in, const ir::Dim& m) {
  if (!in.bias || !ctx.has_input(*in.bias) || !ctx.input_type(*in.bias).shape) return Status::ok();
  const ir::Shape& b = *ctx.input_type(*in.bias).shape;
  if (b.rank() != 1 || (m.is_static() && b[0].is_static() && b[0].value() != m.value()))
    return ctx.error("bias " + b.to_string() + " does not match " + m.to_string() + " output channels");
  return Status::ok();
}

// output_shape's spatial entries (it may also list N and C), or -1 each when absent.
std::vector<int64_t> requested_output(const ir::Node& node, size_t spatial) {
  std::vector<int64_t> r = node.attr_ints("output_shape");
  if (r.size() == spatial + 2) r.erase(r.begin(), r.begin() + 2);
  if (r.size() != spatial) r.assign(spatial, -1);
  return r;
}

Result<int64_t> transposed_axis(WindowAttrs& a, const ir::Node& node, size_t d, int64_t in) {
  const size_t n = a.kernel.size();
  const std::vector<int64_t> out_pad = node.attr_ints("output_padding", std::vector<int64_t>(n, 0));
  if (out_pad.size() != n) return invalid_model(node.describe() + ": output_padding needs one value per spatial axis");
  return transposed_output_size(a, d, in, out_pad[d], requested_output(node, n)[d], node);
}

}  // namespace

Result<std::optional<ir::Shape>> conv_output_shape(const InferenceContext& ctx, const ConvInputs& in, bool transposed) {
  KILN_ASSIGN_OR_RETURN(ir::Dim m, check_conv_operands(ctx, in, transposed));
  KILN_RETURN_IF_ERROR(check_bias(ctx, in, m));
  const std::optional<ir::Shape>& x = ctx.input_type(in.x).shape;
  if (!x) return std::optional<ir::Shape>();
  const size_t spatial = x->rank() - 2;
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> kernel, kernel_dims(ctx.node(), ctx.input_type(in.w).shape, spatial));
  std::vector<ir::Dim> dims = {(*x)[0], m};
  if (kernel.empty() && spatial > 0) {
    dims.resize(spatial + 2);
  } else if (transposed) {
    KILN_ASSIGN_OR_RETURN(WindowAttrs a, read_window_attrs(ctx.node(), kernel));
    for (size_t d = 0; d < spatial; ++d) {
      const ir::Dim& size_in = (*x)[d + 2];
      if (!size_in.is_static()) {
        dims.emplace_back();
        continue;
      }
      KILN_ASSIGN_OR_RETURN(int64_t size, transposed_axis(a, ctx.node(), d, size_in.value()));
      dims.emplace_back(size);
    }
  } else {
    KILN_ASSIGN_OR_RETURN(WindowAttrs a, read_window_attrs(ctx.node(), kernel));
    const auto& xd = x->dims();
    KILN_ASSIGN_OR_RETURN(std::vector<ir::Dim> out, window_output_dims(a, {xd.begin() + 2, xd.end()}, ctx.node()));
    dims.insert(dims.end(), out.begin(), out.end());
  }
  return std::optional<ir::Shape>(ir::Shape(dims));
}

Result<ConvProblem> conv_problem(const ir::Node& node, const std::vector<int64_t>& x, const std::vector<int64_t>& w,
                                 const std::vector<int64_t>& y, bool transposed) {
  const size_t spatial = x.size() - 2;
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> kernel, kernel_dims(node, ir::Shape::from_static(w), spatial));
  if (kernel != std::vector<int64_t>(w.begin() + 2, w.end()))
    return invalid_argument(node.describe() + ": kernel_shape " + shape_to_string(kernel) + " does not match weights " +
                            shape_to_string(w));
  KILN_ASSIGN_OR_RETURN(WindowAttrs a, read_window_attrs(node, kernel));
  for (size_t d = 0; d < spatial; ++d) {
    // Resolves auto_pad into a.pads; the sizes were already checked by the shape rule.
    if (transposed) {
      KILN_RETURN_IF_ERROR(transposed_axis(a, node, d, x[d + 2]).status());
    } else {
      KILN_RETURN_IF_ERROR(window_output_size(a, d, x[d + 2], node).status());
    }
  }
  ConvProblem p;
  p.batch = x[0];
  p.in_channels = x[1];
  p.out_channels = y[1];
  p.group = node.attr_int("group", 1);
  p.grid.positions.assign((transposed ? x : y).begin() + 2, (transposed ? x : y).end());
  p.grid.image.assign((transposed ? y : x).begin() + 2, (transposed ? y : x).end());
  p.grid.kernel = a.kernel;
  p.grid.strides = a.strides;
  p.grid.dilations = a.dilations;
  p.grid.pads_begin.assign(a.pads.begin(), a.pads.begin() + static_cast<std::ptrdiff_t>(spatial));
  return p;
}

namespace {

template <bool kTransposed>
Status conv_infer(InferenceContext& ctx) {
  KILN_ASSIGN_OR_RETURN(std::optional<ir::Shape> shape, conv_output_shape(ctx, ConvInputs{}, kTransposed));
  ctx.set_output_type(0, ir::TensorType{ctx.input_type(0).dtype, std::move(shape)});
  return Status::ok();
}

// ---- kernels ----

// ConvTranspose: col[M/g * taps, P] = W_g^T * X_g, then col2im adds each tap into the output.
template <class Acc>
void conv_transpose_forward(const ConvProblem& p, const Acc* x, const Acc* w, const Acc* bias, Acc* y) {
  const TapGrid& g = p.grid;
  const int64_t cin = p.in_channels / p.group, cout = p.out_channels / p.group;
  const int64_t taps = g.kernel_count(), positions = g.position_count(), image = shape_element_count(g.image);
  const int64_t rows = cout * taps;
  std::vector<Acc> wt(static_cast<size_t>(rows * cin)), col(static_cast<size_t>(rows * positions));
  for (int64_t n = 0; n < p.batch; ++n) {
    for (int64_t grp = 0; grp < p.group; ++grp) {
      const Acc* wg = w + grp * cin * rows;  // W is [C, M/g, taps]: group rows are [cin, rows]
      for (int64_t c = 0; c < cin; ++c)
        for (int64_t r = 0; r < rows; ++r) wt[r * cin + c] = wg[c * rows + r];
      blocked_gemm(wt.data(), x + (n * p.in_channels + grp * cin) * positions, col.data(), rows, cin, positions);
      Acc* yg = y + (n * p.out_channels + grp * cout) * image;
#pragma omp parallel for schedule(static)
      for (int64_t m = 0; m < cout; ++m) {
        Acc* ym = yg + m * image;
        std::fill(ym, ym + image, bias ? bias[grp * cout + m] : Acc(0));
        for (int64_t t = 0; t < taps; ++t) {
          const Acc* cr = col.data() + (m * taps + t) * positions;
          for_each_tap(g, t, [&](int64_t pos, int64_t off) { ym[off] += cr[pos]; });
        }
      }
    }
  }
}

// The tensor's elements as Acc: its own storage when T is Acc, else a converted copy in `storage`.
template <class Acc, class T>
const Acc* as_acc(const Tensor* t, std::vector<Acc>& storage) {
  if (!t) return nullptr;
  if constexpr (std::is_same_v<T, Acc>) {
    return t->data<Acc>();
  } else {
    storage.resize(static_cast<size_t>(t->element_count()));
    for (size_t i = 0; i < storage.size(); ++i) storage[i] = static_cast<Acc>(to_double(t->data<T>()[i]));
    return storage.data();
  }
}

// Conv or ConvTranspose of concrete tensors, computed in float (double for double).
Status convolve(const ir::Node& node, const Tensor& x, const Tensor& w, const Tensor* bias, Tensor& out, bool transposed) {
  KILN_ASSIGN_OR_RETURN(ConvProblem p, conv_problem(node, x.shape(), w.shape(), out.shape(), transposed));
  if (bias && bias->element_count() != p.out_channels)
    return invalid_argument(node.describe() + ": bias length does not match output channels");
  if (!is_float_dtype(out.dtype()))
    return invalid_argument(node.describe() + ": unsupported element type " + dtype_name(out.dtype()));
  visit_dtype(out.dtype(), [&]<class T>() {
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, Float16> ||
                  std::is_same_v<T, BFloat16>) {
      using Acc = std::conditional_t<std::is_same_v<T, double>, double, float>;
      std::vector<Acc> xs, ws, bs, ys;
      const Acc* xp = as_acc<Acc, T>(&x, xs);
      const Acc* wp = as_acc<Acc, T>(&w, ws);
      const Acc* b = as_acc<Acc, T>(bias, bs);
      Acc* y = nullptr;
      if constexpr (std::is_same_v<T, Acc>) {
        y = out.data<Acc>();
      } else {
        ys.resize(static_cast<size_t>(out.element_count()));
        y = ys.data();
      }
      if (transposed) conv_transpose_forward(p, xp, wp, b, y);
      else conv_forward(p, xp, wp, b, y);
      if constexpr (!std::is_same_v<T, Acc>)
        for (size_t i = 0; i < ys.size(); ++i) out.data<T>()[i] = from_double<T>(ys[i]);
    }
  });
  return Status::ok();
}

template <bool kTransposed>
Status conv_kernel(KernelContext& ctx) {
  return convolve(ctx.node(), *ctx.input(0), *ctx.input(1), ctx.input(2), *ctx.output(0), kTransposed);
}

// ---- Col2Im: input [N, C * prod(block), L] -> [N, C, image...], each column a block's values ----

// The blocks' grid over the padded image: block_shape, strides, dilations, pads, as a TapGrid
// whose positions are the L blocks and taps the block's elements.
Result<TapGrid> col2im_grid(const ir::Node& node, const std::vector<int64_t>& image, const std::vector<int64_t>& block) {
  const size_t n = image.size();
  if (block.size() != n) return invalid_model(node.describe() + ": image_shape and block_shape differ in length");
  TapGrid g;
  g.image = image;
  g.kernel = block;
  g.strides = node.attr_ints("strides", std::vector<int64_t>(n, 1));
  g.dilations = node.attr_ints("dilations", std::vector<int64_t>(n, 1));
  const std::vector<int64_t> pads = node.attr_ints("pads", std::vector<int64_t>(2 * n, 0));
  if (g.strides.size() != n || g.dilations.size() != n || pads.size() != 2 * n)
    return invalid_model(node.describe() + ": strides, dilations and pads must match the " + std::to_string(n) + " image dims");
  g.pads_begin.assign(pads.begin(), pads.begin() + static_cast<std::ptrdiff_t>(n));
  for (size_t d = 0; d < n; ++d) {
    if (image[d] <= 0 || block[d] <= 0 || g.strides[d] <= 0 || g.dilations[d] <= 0 || pads[d] < 0 || pads[n + d] < 0)
      return invalid_model(node.describe() + ": image_shape, block_shape, strides and dilations must be positive, pads not negative");
    const int64_t extent = g.dilations[d] * (block[d] - 1) + 1, span = image[d] + pads[d] + pads[n + d];
    if (span < extent) return invalid_model(node.describe() + ": a block of extent " + std::to_string(extent) + " does not fit dim " + std::to_string(d));
    g.positions.push_back((span - extent) / g.strides[d] + 1);
  }
  return g;
}

Status col2im_infer(InferenceContext& ctx) {
  const ir::TensorType& x = ctx.input_type(0);
  KILN_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> image, known_int64s(ctx, 1, "image_shape"));
  KILN_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> block, known_int64s(ctx, 2, "block_shape"));
  if (x.shape && x.shape->rank() != 3) return ctx.error("input must have rank 3 [N, C * prod(block_shape), L]");
  if (!image || !block || !x.shape) {
    const auto& image_type = ctx.input_type(1).shape;
    if (image_type && image_type->is_static() && image_type->rank() == 1)
      ctx.set_output_type(0, typed_like(x, unknown_shape(2 + static_cast<size_t>(image_type->static_dims()[0]))));
    else
      ctx.set_output_type(0, typed_like(x, std::nullopt));
    return Status::ok();
  }
  KILN_ASSIGN_OR_RETURN(const TapGrid g, col2im_grid(ctx.node(), *image, *block));
  const int64_t k = shape_element_count(*block);
  const ir::Dim& columns = (*x.shape)[1];
  if (columns.is_static() && columns.value() % k != 0)
    return ctx.error("input dim 1 (" + std::to_string(columns.value()) + ") is not a multiple of prod(block_shape) " + std::to_string(k));
  const ir::Dim& blocks = (*x.shape)[2];
  if (blocks.is_static() && blocks.value() != g.position_count())
    return ctx.error("input has " + std::to_string(blocks.value()) + " blocks; the image, block, strides, dilations and pads give " +
                     std::to_string(g.position_count()));
  std::vector<ir::Dim> out = {(*x.shape)[0], columns.is_static() ? ir::Dim(columns.value() / k) : ir::Dim::unknown()};
  for (int64_t d : *image) out.emplace_back(d);
  ctx.set_output_type(0, typed_like(x, ir::Shape(out)));
  return Status::ok();
}

Status col2im_kernel(KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  Tensor& y = *ctx.output(0);
  KILN_ASSIGN_OR_RETURN(const std::vector<int64_t> image, read_int64s(*ctx.input(1), "image_shape"));
  KILN_ASSIGN_OR_RETURN(const std::vector<int64_t> block, read_int64s(*ctx.input(2), "block_shape"));
  KILN_ASSIGN_OR_RETURN(const TapGrid g, col2im_grid(ctx.node(), image, block));
  const int64_t taps = g.kernel_count(), blocks = g.position_count(), pixels = shape_element_count(image);
  const int64_t planes = y.shape()[0] * y.shape()[1];
  if (x.shape()[2] != blocks || x.shape()[1] % taps != 0) return ctx.error("input does not hold the blocks the attributes give");
  bool ok = false;
  visit_dtype(x.dtype(), [&]<class T>() {
    if constexpr (!std::is_same_v<T, std::string> && !std::is_same_v<T, bool>) {
      ok = true;
      const T* in = x.data<T>();
      T* out = y.data<T>();
      std::vector<double> sum(static_cast<size_t>(pixels));
      for (int64_t plane = 0; plane < planes; ++plane) {
        std::fill(sum.begin(), sum.end(), 0.0);
        for (int64_t t = 0; t < taps; ++t) {
          const T* column = in + (plane * taps + t) * blocks;
          for_each_tap(g, t, [&](int64_t pos, int64_t off) { sum[static_cast<size_t>(off)] += to_double(column[pos]); });
        }
        for (int64_t i = 0; i < pixels; ++i) out[plane * pixels + i] = from_double<T>(sum[static_cast<size_t>(i)]);
      }
    }
  });
  return ok ? Status::ok() : ctx.error(std::string("unsupported element type ") + dtype_name(x.dtype()));
}

}  // namespace

Status conv_reference(const ir::Node& node, const Tensor& x, const Tensor& w, const Tensor* bias, Tensor& y) {
  return convolve(node, x, w, bias, y, false);
}

void register_conv_ops(OpRegistry& r) {
  for (int v : {1, 11}) {
    r.add({"", "Conv", v, with_required_inputs(2, conv_infer<false>), conv_kernel<false>});
    r.add({"", "ConvTranspose", v, with_required_inputs(2, conv_infer<true>), conv_kernel<true>});
  }
  r.add({"", "Col2Im", 18, with_required_inputs(3, col2im_infer), col2im_kernel});
}

}  // namespace kiln::ops
