// Op family pool: MaxPool (with Indices), AveragePool, LpPool, their Global forms, and MaxUnpool.
// Every pool walks kernel taps over the positions of one (n, c) plane with the window geometry
// Conv uses; values are combined in double and rounded once to the output type.
#include <cmath>
#include <limits>

#include "kiln/ops/data_movement.h"
#include "kiln/ops/op_families.h"
#include "kiln/ops/op_helpers.h"
#include "kiln/ops/op_registry.h"
#include "kiln/ops/spatial_geometry.h"

namespace kiln::ops {
namespace {

enum class PoolKind { kMax, kAverage, kLp };

// ---- shape rules ----

Result<WindowAttrs> pool_attrs(const ir::Node& node, size_t spatial) {
  std::vector<int64_t> kernel = node.attr_ints("kernel_shape");
  if (kernel.size() != spatial)
    return invalid_model(node.describe() + ": kernel_shape has " + std::to_string(kernel.size()) + " dims for " +
                         std::to_string(spatial) + " spatial axes");
  return read_window_attrs(node, std::move(kernel));
}

Status check_pool_input(const InferenceContext& ctx) {
  const auto& x = ctx.input_type(0).shape;
  if (x && x->rank() < 3) return ctx.error("input must have rank >= 3 (N, C, spatial...), got " + x->to_string());
  return Status::ok();
}

// Output 0 (and the int64 Indices output of MaxPool when present) get `shape`.
void set_pool_outputs(InferenceContext& ctx, std::optional<ir::Shape> shape) {
  ctx.set_output_type(0, ir::TensorType{ctx.input_type(0).dtype, shape});
  if (ctx.output_count() > 1) ctx.set_output_type(1, ir::TensorType{DType::kInt64, shape});
}

Status pool_infer(InferenceContext& ctx) {
  KILN_RETURN_IF_ERROR(check_pool_input(ctx));
  const auto& x = ctx.input_type(0).shape;
  if (!x) {
    set_pool_outputs(ctx, std::nullopt);
    return Status::ok();
  }
  KILN_ASSIGN_OR_RETURN(WindowAttrs a, pool_attrs(ctx.node(), x->rank() - 2));
  const auto& d = x->dims();
  KILN_ASSIGN_OR_RETURN(std::vector<ir::Dim> out, window_output_dims(a, {d.begin() + 2, d.end()}, ctx.node()));
  out.insert(out.begin(), d.begin(), d.begin() + 2);
  set_pool_outputs(ctx, ir::Shape(out));
  return Status::ok();
}

Status global_pool_infer(InferenceContext& ctx) {
  KILN_RETURN_IF_ERROR(check_pool_input(ctx));
  const auto& x = ctx.input_type(0).shape;
  if (!x) {
    set_pool_outputs(ctx, std::nullopt);
    return Status::ok();
  }
  std::vector<ir::Dim> out(x->dims().begin(), x->dims().begin() + 2);
  out.resize(x->rank(), ir::Dim(1));
  set_pool_outputs(ctx, ir::Shape(out));
  return Status::ok();
}

// ---- kernels ----

struct PoolProblem {
  int64_t planes = 0;  // N * C
  TapGrid grid;        // positions: output spatial dims; image: input spatial dims
  std::vector<int64_t> pads_end;
};

Result<PoolProblem> pool_problem(const KernelContext& ctx, bool global) {
  const std::vector<int64_t>& x = ctx.input(0)->shape();
  const std::vector<int64_t>& y = ctx.output(0)->shape();
  const size_t spatial = x.size() - 2;
  PoolProblem p;
  p.planes = x[0] * x[1];
  p.grid.image.assign(x.begin() + 2, x.end());
  p.grid.positions.assign(y.begin() + 2, y.end());
  if (global) {
    p.grid.kernel = p.grid.image;
    p.grid.strides = p.grid.dilations = std::vector<int64_t>(spatial, 1);
    p.grid.pads_begin = p.pads_end = std::vector<int64_t>(spatial, 0);
    return p;
  }
  KILN_ASSIGN_OR_RETURN(WindowAttrs a, pool_attrs(ctx.node(), spatial));
  for (size_t d = 0; d < spatial; ++d) KILN_RETURN_IF_ERROR(window_output_size(a, d, x[d + 2], ctx.node()).status());
  p.grid.kernel = a.kernel;
  p.grid.strides = a.strides;
  p.grid.dilations = a.dilations;
  p.grid.pads_begin.assign(a.pads.begin(), a.pads.begin() + static_cast<std::ptrdiff_t>(spatial));
  p.pads_end.assign(a.pads.begin() + static_cast<std::ptrdiff_t>(spatial), a.pads.end());
  return p;
}

// Per position, how many taps fall inside the padded image (AveragePool's count_include_pad divisor):
// the same walk over an image grown by the pads.
std::vector<double> padded_tap_counts(const PoolProblem& p) {
  TapGrid padded = p.grid;
  for (size_t d = 0; d < padded.image.size(); ++d) {
    padded.image[d] += p.grid.pads_begin[d] + p.pads_end[d];
    padded.pads_begin[d] = 0;
  }
  std::vector<double> counts(static_cast<size_t>(p.grid.position_count()), 0.0);
  for (int64_t t = 0; t < padded.kernel_count(); ++t) for_each_tap(padded, t, [&](int64_t pos, int64_t) { counts[pos] += 1; });
  return counts;
}

// Index MaxPool reports for an offset within a plane: row-major, or column-major for storage_order 1.
int64_t storage_index(int64_t offset, const std::vector<int64_t>& image, bool column_major) {
  if (!column_major) return offset;
  int64_t index = 0, stride = 1;
  std::vector<int64_t> coords(image.size());
  for (size_t d = image.size(); d-- > 0;) {
    coords[d] = offset % image[d];
    offset /= image[d];
  }
  for (size_t d = 0; d < image.size(); ++d) {
    index += coords[d] * stride;
    stride *= image[d];
  }
  return index;
}

Status pool_kernel_impl(KernelContext& ctx, PoolKind kind, bool global) {
  KILN_ASSIGN_OR_RETURN(PoolProblem p, pool_problem(ctx, global));
  const Tensor& x = *ctx.input(0);
  Tensor& y = *ctx.output(0);
  Tensor* indices = kind == PoolKind::kMax ? ctx.output(1) : nullptr;
  const bool include_pad = ctx.node().attr_int("count_include_pad", 0) != 0;
  const double lp = ctx.node().attr_int("p", 2);
  const bool column_major = ctx.node().attr_int("storage_order", 0) != 0;
  if (kind == PoolKind::kLp && lp <= 0) return ctx.error("p must be positive");
  const int64_t positions = p.grid.position_count(), image = shape_element_count(p.grid.image);
  const std::vector<double> padded_counts =
      kind == PoolKind::kAverage && include_pad ? padded_tap_counts(p) : std::vector<double>();
  bool supported = false;
  visit_dtype(x.dtype(), [&]<class T>() {
    if constexpr (!std::is_same_v<T, std::string> && !std::is_same_v<T, bool>) {
      supported = true;
      const T* xs = x.data<T>();
      T* ys = y.data<T>();
#pragma omp parallel for schedule(static)
      for (int64_t plane = 0; plane < p.planes; ++plane) {
        const T* in = xs + plane * image;
        const double init = kind == PoolKind::kMax ? -std::numeric_limits<double>::infinity() : 0.0;
        std::vector<double> acc(static_cast<size_t>(positions), init), count(static_cast<size_t>(positions), 0.0);
        std::vector<int64_t> arg(static_cast<size_t>(positions), 0);
        for (int64_t t = 0; t < p.grid.kernel_count(); ++t) {
          for_each_tap(p.grid, t, [&](int64_t pos, int64_t off) {
            const double v = to_double(in[off]);
            count[pos] += 1;
            if (kind == PoolKind::kAverage) acc[pos] += v;
            else if (kind == PoolKind::kLp) acc[pos] += std::pow(std::fabs(v), lp);
            else if (v > acc[pos] || count[pos] == 1) {
              acc[pos] = v;
              arg[pos] = off;
            }
          });
        }
        for (int64_t pos = 0; pos < positions; ++pos) {
          double r = acc[pos];
          if (count[pos] == 0) r = 0.0;  // a window entirely in the padding
          else if (kind == PoolKind::kAverage) r /= include_pad ? padded_counts[pos] : count[pos];
          else if (kind == PoolKind::kLp) r = std::pow(r, 1.0 / lp);
          ys[plane * positions + pos] = from_double<T>(r);
          if (indices)
            indices->data<int64_t>()[plane * positions + pos] =
                plane * image + storage_index(arg[pos], p.grid.image, column_major);
        }
      }
    }
  });
  if (!supported) return ctx.error(std::string("unsupported element type ") + dtype_name(x.dtype()));
  return Status::ok();
}

template <PoolKind kKind, bool kGlobal>
Status pool_kernel(KernelContext& ctx) {
  return pool_kernel_impl(ctx, kKind, kGlobal);
}

// ---- MaxUnpool ----

// The spatial dims MaxPool would have read: (in - 1) * stride + kernel - pads.
Result<std::vector<ir::Dim>> unpooled_dims(const ir::Node& node, const ir::Shape& x) {
  const size_t spatial = x.rank() - 2;
  KILN_ASSIGN_OR_RETURN(WindowAttrs a, pool_attrs(node, spatial));
  std::vector<ir::Dim> out(x.dims().begin(), x.dims().begin() + 2);
  for (size_t d = 0; d < spatial; ++d) {
    const ir::Dim& in = x[d + 2];
    out.push_back(in.is_static() ? ir::Dim((in.value() - 1) * a.strides[d] + a.kernel[d] - a.pads[d] - a.pads[d + spatial])
                                 : ir::Dim::unknown());
  }
  return out;
}

// The output is the output_shape input when given, else the unpooled dims.
Status max_unpool_infer(InferenceContext& ctx) {
  KILN_RETURN_IF_ERROR(check_pool_input(ctx));
  const auto& x = ctx.input_type(0).shape;
  const DType dtype = ctx.input_type(0).dtype;
  if (x) KILN_RETURN_IF_ERROR(unpooled_dims(ctx.node(), *x).status());
  if (ctx.has_input(2)) {
    if (const Tensor* v = ctx.input_value(2)) {
      Result<std::vector<int64_t>> shape = read_int64s(*v, "output_shape");
      if (!shape.is_ok()) return ctx.error(shape.status().message());
      ctx.set_output_type(0, ir::make_type(dtype, shape.value()));
    } else {
      ctx.set_output_type(0, ir::TensorType{dtype, x ? std::optional<ir::Shape>(ir::Shape(std::vector<ir::Dim>(x->rank()))) : std::nullopt});
    }
    return Status::ok();
  }
  if (!x) {
    ctx.set_output_type(0, ir::TensorType{dtype, std::nullopt});
    return Status::ok();
  }
  KILN_ASSIGN_OR_RETURN(std::vector<ir::Dim> out, unpooled_dims(ctx.node(), *x));
  ctx.set_output_type(0, ir::TensorType{dtype, ir::Shape(out)});
  return Status::ok();
}

// Indices address the unpooled layout; each value lands at the same (n, c, spatial) coordinates of
// the output, which output_shape may make larger.
Status max_unpool_kernel(KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  Tensor& y = *ctx.output(0);
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> idx, read_int64s(*ctx.input(1), "indices"));
  if (static_cast<int64_t>(idx.size()) != x.element_count()) return ctx.error("indices must have the shape of X");
  KILN_ASSIGN_OR_RETURN(std::vector<ir::Dim> unpooled, unpooled_dims(ctx.node(), ir::Shape::from_static(x.shape())));
  const std::vector<int64_t> from = ir::Shape(unpooled).static_dims();
  const std::vector<int64_t>& to = y.shape();
  if (from.size() != to.size()) return ctx.error("output_shape must have the rank of X");
  const std::vector<int64_t> to_strides = contiguous_strides(to);
  std::vector<int64_t> target(idx.size());
  for (size_t i = 0; i < idx.size(); ++i) {
    int64_t rest = idx[i], off = 0;
    if (rest < 0 || rest >= shape_element_count(from)) return ctx.error("index " + std::to_string(idx[i]) + " is out of range");
    for (size_t d = from.size(); d-- > 0;) {
      const int64_t c = rest % from[d];
      rest /= from[d];
      if (c >= to[d]) return ctx.error("index " + std::to_string(idx[i]) + " falls outside output_shape");
      off += c * to_strides[d];
    }
    target[i] = off;
  }
  bool supported = false;
  visit_dtype(x.dtype(), [&]<class T>() {
    if constexpr (!std::is_same_v<T, std::string>) {
      supported = true;
      std::fill_n(y.data<T>(), y.element_count(), from_double<T>(0.0));
      for (size_t i = 0; i < target.size(); ++i) y.data<T>()[target[i]] = x.data<T>()[i];
    }
  });
  if (!supported) return ctx.error(std::string("unsupported element type ") + dtype_name(x.dtype()));
  return Status::ok();
}

}  // namespace

void register_pool_ops(OpRegistry& r) {
  for (int v : {1, 8, 10, 11, 12}) r.add({"", "MaxPool", v, with_required_inputs(1, pool_infer), pool_kernel<PoolKind::kMax, false>});
  for (int v : {1, 7, 10, 11, 19}) r.add({"", "AveragePool", v, with_required_inputs(1, pool_infer), pool_kernel<PoolKind::kAverage, false>});
  for (int v : {2, 11, 18}) r.add({"", "LpPool", v, with_required_inputs(1, pool_infer), pool_kernel<PoolKind::kLp, false>});
  r.add({"", "GlobalMaxPool", 1, with_required_inputs(1, global_pool_infer), pool_kernel<PoolKind::kMax, true>});
  r.add({"", "GlobalAveragePool", 1, with_required_inputs(1, global_pool_infer), pool_kernel<PoolKind::kAverage, true>});
  r.add({"", "GlobalLpPool", 2, with_required_inputs(1, global_pool_infer), pool_kernel<PoolKind::kLp, true>});
  for (int v : {9, 11}) r.add({"", "MaxUnpool", v, with_required_inputs(2, max_unpool_infer), max_unpool_kernel});
}

}  // namespace kiln::ops
