// Op family sampling: ops that read a feature map at fractional positions (and DeformConv-19, a
// convolution whose taps are moved by learned offsets and weighted by a mask), and AffineGrid
// (opset 20), which makes the grids they read from affine matrices. GridSample (opset 16:
// bilinear, nearest or bicubic on 2-D maps; opset 20: the same as linear, nearest or cubic on maps
// of any rank; zeros, border or reflection padding; PyTorch's grid_sample, which the ONNX test data
// comes from) and RoiAlign (opsets 10 and 16: avg or max pooling of bilinear samples,
// following the ONNX Runtime / Detectron kernel the spec points to). Arithmetic is in double.
#include <algorithm>
#include <array>
#include <cmath>

#include "kiln/ops/conv.h"
#include "kiln/ops/grid_sample.h"
#include "kiln/ops/data_movement.h"
#include "kiln/ops/deformable_columns.h"
#include "kiln/ops/family_support.h"
#include "kiln/ops/interpolation.h"
#include "kiln/ops/op_families.h"
#include "kiln/ops/op_helpers.h"

namespace kiln::ops {
namespace {

// InvalidModel unless input i's shape, when known, has rank `rank`.
Status check_rank(const InferenceContext& ctx, size_t i, size_t rank, const std::string& what) {
  const auto& s = ctx.input_type(i).shape;
  if (s && s->rank() != rank)
    return ctx.error(what + " must have rank " + std::to_string(rank) + ", got " + s->to_string());
  return Status::ok();
}

// Dim d of input i's shape (unknown when the shape is).
ir::Dim dim_of(const InferenceContext& ctx, size_t i, size_t d) {
  const auto& s = ctx.input_type(i).shape;
  return s ? (*s)[d] : ir::Dim::unknown();
}

// InvalidModel unless the two dims, when both static, are equal.
Status check_same_dim(const InferenceContext& ctx, const ir::Dim& a, const ir::Dim& b, const std::string& what) {
  if (a.is_static() && b.is_static() && a.value() != b.value())
    return ctx.error(what + " differ: " + a.to_string() + " vs " + b.to_string());
  return Status::ok();
}

// A float-typed tensor's elements as double.
// Writes double values into a float-typed tensor of as many elements.
void store_doubles(const std::vector<double>& v, Tensor& t) {
  dispatch<FloatTypes>(t.dtype(), [&]<class T>() {
    for (size_t i = 0; i < v.size(); ++i) t.data<T>()[i] = from_double<T>(v[i]);
  });
}

// ---- GridSample ----

}  // namespace

// Opset 16 names the modes bilinear / nearest / bicubic and samples 2-D maps; opset 20 names them
// linear / nearest / cubic and samples maps of any number of spatial dims.
Result<GridSampleAttrs> grid_sample_attrs(const ir::Node& node) {
  GridSampleAttrs a;
  const bool nd = node.opset_version >= 20;
  const std::string mode = node.attr_string("mode", nd ? "linear" : "bilinear");
  const std::string padding = node.attr_string("padding_mode", "zeros");
  if (mode == "nearest") a.mode = GridMode::kNearest;
  else if (mode == (nd ? "cubic" : "bicubic")) a.mode = GridMode::kCubic;
  else if (mode != (nd ? "linear" : "bilinear"))
    return invalid_model(node.describe() + ": unknown mode '" + mode + "' (opset " + std::to_string(node.opset_version) +
                         " has " + (nd ? "linear, nearest, cubic)" : "bilinear, nearest, bicubic)"));
  if (padding == "border") a.padding = GridPadding::kBorder;
  else if (padding == "reflection") a.padding = GridPadding::kReflection;
  else if (padding != "zeros") return invalid_model(node.describe() + ": unknown padding_mode '" + padding + "'");
  a.align_corners = node.attr_int("align_corners", 0) != 0;
  return a;
}

namespace {

// Inputs X [N, C, d1..dr] and grid [N, D1..Dr, r]; output [N, C, D1..Dr]. r = 2 before opset 20.
Status grid_sample_rule(InferenceContext& ctx) {
  KILN_RETURN_IF_ERROR(check_input_count(ctx, 2, 2));
  KILN_RETURN_IF_ERROR(check_input_dtype<FloatTypes>(ctx, 0));
  KILN_RETURN_IF_ERROR(check_input_dtype<FloatTypes>(ctx, 1));
  KILN_RETURN_IF_ERROR(grid_sample_attrs(ctx.node()).status());
  const auto& xs = ctx.input_type(0).shape;
  const auto& gs = ctx.input_type(1).shape;
  if (ctx.node().opset_version < 20) {
    KILN_RETURN_IF_ERROR(check_rank(ctx, 0, 4, "X"));
    KILN_RETURN_IF_ERROR(check_rank(ctx, 1, 4, "grid"));
  } else {
    if (xs && xs->rank() < 3) return ctx.error("X must have rank >= 3 (N, C and a spatial dim), got " + xs->to_string());
    if (gs && gs->rank() < 3) return ctx.error("grid must have rank >= 3, got " + gs->to_string());
    if (xs && gs && xs->rank() != gs->rank())
      return ctx.error("X and grid must have the same rank, got " + xs->to_string() + " and " + gs->to_string());
  }
  if (!xs && !gs) {
    ctx.set_output_type(0, typed_like(ctx.input_type(0), std::nullopt));
    return Status::ok();
  }
  const size_t rank = xs ? xs->rank() : gs->rank();
  KILN_RETURN_IF_ERROR(check_same_dim(ctx, dim_of(ctx, 0, 0), dim_of(ctx, 1, 0), "batch sizes of X and grid"));
  KILN_RETURN_IF_ERROR(check_same_dim(ctx, dim_of(ctx, 1, rank - 1), ir::Dim(static_cast<int64_t>(rank) - 2),
                                      "grid's last dim and the number of spatial dims"));
  std::vector<ir::Dim> out{dim_of(ctx, 0, 0), dim_of(ctx, 0, 1)};
  for (size_t d = 1; d + 1 < rank; ++d) out.push_back(dim_of(ctx, 1, d));
  ctx.set_output_type(0, ir::TensorType{ctx.input_type(0).dtype, ir::Shape(out)});
  return Status::ok();
}

}  // namespace

double unnormalize(double coord, int64_t size, bool align_corners) {
  return align_corners ? (coord + 1) / 2 * static_cast<double>(size - 1) : ((coord + 1) * static_cast<double>(size) - 1) / 2;
}

namespace {

// x reflected into [twice_low / 2, twice_high / 2] (PyTorch's reflect_coordinates).
double reflect(double x, double twice_low, double twice_high) {
  if (twice_low == twice_high) return 0;
  const double low = twice_low / 2, span = (twice_high - twice_low) / 2;
  x = std::fabs(x - low);
  const double extra = std::fmod(x, span);
  return std::fmod(std::floor(x / span), 2.0) == 0 ? extra + low : span - extra + low;
}

}  // namespace

double pad_coordinate(double x, int64_t size, const GridSampleAttrs& a) {
  if (a.padding == GridPadding::kZeros) return x;
  if (a.padding == GridPadding::kReflection)
    x = a.align_corners ? reflect(x, 0, 2.0 * static_cast<double>(size - 1)) : reflect(x, -1, 2.0 * static_cast<double>(size) - 1);
  return std::clamp(x, 0.0, static_cast<double>(size - 1));
}

namespace {

// One channel's map of X over r spatial dims (dims[0] outermost); positions outside it (and NaN
// positions) read 0.
struct SpatialMap {
  const double* data;
  std::vector<int64_t> dims;

  double at(const std::vector<double>& position) const {
    int64_t offset = 0;
    for (size_t d = 0; d < dims.size(); ++d) {
      const double p = position[d];
      if (!(p >= 0 && p <= static_cast<double>(dims[d] - 1))) return 0;
      offset = offset * dims[d] + static_cast<int64_t>(p);
    }
    return data[offset];
  }
};

// Sum over the taps^r combinations of per-axis taps: tap t of axis d is at position[d][t] with
// weight[d][t] (each axis' taps are computed once, their products here).
double weighted_taps(const SpatialMap& m, const std::vector<std::vector<double>>& position,
                     const std::vector<std::vector<double>>& weight) {
  const size_t rank = position.size(), taps = position[0].size();
  std::vector<size_t> tap(rank, 0);
  std::vector<double> at(rank);
  double sum = 0;
  while (true) {
    double w = 1;
    for (size_t d = 0; d < rank; ++d) {
      at[d] = position[d][tap[d]];
      w *= weight[d][tap[d]];
    }
    if (w != 0) sum += w * m.at(at);
    size_t d = rank;
    while (d > 0 && ++tap[d - 1] == taps) tap[--d] = 0;
    if (d == 0) return sum;
  }
}

// The value at pixel coordinates `x` (unpadded; one per spatial dim, outermost first).
double grid_sample_at(const SpatialMap& m, const std::vector<double>& x, const GridSampleAttrs& a) {
  const size_t rank = x.size();
  if (a.mode == GridMode::kNearest) {
    std::vector<double> at(rank);
    for (size_t d = 0; d < rank; ++d) at[d] = std::nearbyint(pad_coordinate(x[d], m.dims[d], a));
    return m.at(at);
  }
  std::vector<std::vector<double>> position(rank), weight(rank);
  for (size_t d = 0; d < rank; ++d) {
    if (a.mode == GridMode::kLinear) {
      const double p = pad_coordinate(x[d], m.dims[d], a), low = std::floor(p);
      position[d] = {low, low + 1};
      weight[d] = {1 - (p - low), p - low};
    } else {  // cubic over the 4 pixels around x, each tap padded itself (PyTorch's bicubic)
      constexpr double kCubicA = -0.75;
      const double low = std::floor(x[d]);
      weight[d] = cubic_weights(kCubicA, x[d] - low);
      for (int t = 0; t < 4; ++t) position[d].push_back(pad_coordinate(low - 1 + t, m.dims[d], a));
    }
  }
  return weighted_taps(m, position, weight);
}

Status grid_sample_kernel(KernelContext& ctx) { return grid_sample(ctx, run_in_order); }

// ---- RoiAlign ----

struct RoiAlignAttrs {
  bool max_mode = false;
  bool half_pixel = false;  // shift input coordinates by -0.5 (opset 16's default)
  int64_t height = 1, width = 1, sampling_ratio = 0;
  double spatial_scale = 1;
};

Result<RoiAlignAttrs> roi_align_attrs(const ir::Node& node) {
  RoiAlignAttrs a;
  const std::string mode = node.attr_string("mode", "avg");
  if (mode != "avg" && mode != "max") return invalid_model(node.describe() + ": unknown mode '" + mode + "'");
  a.max_mode = mode == "max";
  const std::string transform =
      node.opset_version >= 16 ? node.attr_string("coordinate_transformation_mode", "half_pixel") : "output_half_pixel";
  if (transform != "half_pixel" && transform != "output_half_pixel")
    return invalid_model(node.describe() + ": unknown coordinate_transformation_mode '" + transform + "'");
  a.half_pixel = transform == "half_pixel";
  a.height = node.attr_int("output_height", 1);
  a.width = node.attr_int("output_width", 1);
  a.sampling_ratio = node.attr_int("sampling_ratio", 0);
  a.spatial_scale = node.attr_float("spatial_scale", 1.0f);
  if (a.height <= 0 || a.width <= 0) return invalid_model(node.describe() + ": output_height and output_width must be positive");
  if (a.sampling_ratio < 0) return invalid_model(node.describe() + ": sampling_ratio must not be negative");
  return a;
}

// Inputs X [N, C, H, W], rois [R, 4], batch_indices [R]; output [R, C, output_height, output_width].
Status roi_align_rule(InferenceContext& ctx) {
  KILN_RETURN_IF_ERROR(check_input_count(ctx, 3, 3));
  KILN_RETURN_IF_ERROR(check_input_dtype<FloatTypes>(ctx, 0));
  KILN_RETURN_IF_ERROR(check_same_dtype(ctx, 0, 1));
  KILN_RETURN_IF_ERROR(check_input_dtype<TypeList<int64_t>>(ctx, 2));
  KILN_ASSIGN_OR_RETURN(RoiAlignAttrs a, roi_align_attrs(ctx.node()));
  KILN_RETURN_IF_ERROR(check_rank(ctx, 0, 4, "X"));
  KILN_RETURN_IF_ERROR(check_rank(ctx, 1, 2, "rois"));
  KILN_RETURN_IF_ERROR(check_rank(ctx, 2, 1, "batch_indices"));
  KILN_RETURN_IF_ERROR(check_same_dim(ctx, dim_of(ctx, 1, 1), ir::Dim(4), "rois' second dim and 4"));
  KILN_RETURN_IF_ERROR(check_same_dim(ctx, dim_of(ctx, 1, 0), dim_of(ctx, 2, 0), "roi counts of rois and batch_indices"));
  ir::Dim rois = dim_of(ctx, 1, 0);
  if (!rois.is_static()) rois = dim_of(ctx, 2, 0);
  ctx.set_output_type(0, ir::TensorType{ctx.input_type(0).dtype, ir::Shape({rois, dim_of(ctx, 0, 1), a.height, a.width})});
  return Status::ok();
}

// The four pixels a bilinear sample at (y, x) reads, with their weights. As in ONNX Runtime, samples
// more than one pixel outside the map read nothing (their value is 0), and others clamp to the map.
// An empty map (H or W of 0) has every sample outside, so nothing past it is read.
struct SampleTaps {
  bool inside = false;
  std::array<int64_t, 4> offset{};
  std::array<double, 4> weight{};
};

SampleTaps roi_sample_taps(double y, double x, int64_t height, int64_t width) {
  SampleTaps t;
  const double h = static_cast<double>(height), w = static_cast<double>(width);
  if (height <= 0 || width <= 0 || !(y >= -1.0 && y <= h && x >= -1.0 && x <= w)) return t;
  t.inside = true;
  y = std::max(y, 0.0);
  x = std::max(x, 0.0);
  auto low_high = [](double& v, int64_t size) {
    int64_t low = static_cast<int64_t>(v);
    if (low >= size - 1) {
      v = static_cast<double>(size - 1);
      return std::pair<int64_t, int64_t>{size - 1, size - 1};
    }
    return std::pair<int64_t, int64_t>{low, low + 1};
  };
  const auto [y_low, y_high] = low_high(y, height);
  const auto [x_low, x_high] = low_high(x, width);
  const double ly = y - static_cast<double>(y_low), lx = x - static_cast<double>(x_low);
  t.offset = {y_low * width + x_low, y_low * width + x_high, y_high * width + x_low, y_high * width + x_high};
  t.weight = {(1 - ly) * (1 - lx), (1 - ly) * lx, ly * (1 - lx), ly * lx};
  return t;
}

// The sample taps of every bin of one roi: bins row-major, each with its grid_h x grid_w samples.
struct RoiSamples {
  int64_t per_bin = 0;
  std::vector<SampleTaps> taps;
};

Result<RoiSamples> roi_samples(const KernelContext& ctx, const RoiAlignAttrs& a, const std::array<double, 4>& roi,
                               int64_t height, int64_t width) {
  for (double v : roi)
    if (!std::isfinite(v)) return ctx.error("rois must be finite");
  const double offset = a.half_pixel ? 0.5 : 0.0;
  const double x1 = roi[0] * a.spatial_scale - offset, y1 = roi[1] * a.spatial_scale - offset;
  double roi_w = roi[2] * a.spatial_scale - offset - x1, roi_h = roi[3] * a.spatial_scale - offset - y1;
  if (!a.half_pixel) {  // the legacy transform forces rois to be at least 1 x 1
    roi_w = std::max(roi_w, 1.0);
    roi_h = std::max(roi_h, 1.0);
  }
  const double bin_h = roi_h / static_cast<double>(a.height), bin_w = roi_w / static_cast<double>(a.width);
  // An adaptive sampling grid covers each bin with about one sample per pixel.
  auto grid_size = [&](double bin) {
    return a.sampling_ratio > 0 ? a.sampling_ratio : static_cast<int64_t>(std::max(std::ceil(bin), 0.0));
  };
  const int64_t grid_h = grid_size(bin_h), grid_w = grid_size(bin_w);
  RoiSamples s;
  s.per_bin = grid_h * grid_w;
  s.taps.reserve(static_cast<size_t>(a.height * a.width * s.per_bin));
  for (int64_t ph = 0; ph < a.height; ++ph)
    for (int64_t pw = 0; pw < a.width; ++pw)
      for (int64_t iy = 0; iy < grid_h; ++iy) {
        const double y = y1 + static_cast<double>(ph) * bin_h + (static_cast<double>(iy) + 0.5) * bin_h / static_cast<double>(grid_h);
        for (int64_t ix = 0; ix < grid_w; ++ix) {
          const double x = x1 + static_cast<double>(pw) * bin_w + (static_cast<double>(ix) + 0.5) * bin_w / static_cast<double>(grid_w);
          s.taps.push_back(roi_sample_taps(y, x, height, width));
        }
      }
  return s;
}

// One bin's value: the average of its bilinear samples, or (max mode, as ONNX Runtime computes it)
// the largest weighted pixel over all samples.
double pool_bin(const double* plane, const SampleTaps* taps, int64_t count, bool max_mode) {
  double acc = 0;
  for (int64_t i = 0; i < count; ++i) {
    const SampleTaps& t = taps[i];
    if (!t.inside) {
      if (max_mode) acc = i == 0 ? 0.0 : std::max(acc, 0.0);
    } else if (max_mode) {
      double v = t.weight[0] * plane[t.offset[0]];
      for (size_t k = 1; k < 4; ++k) v = std::max(v, t.weight[k] * plane[t.offset[k]]);
      acc = i == 0 ? v : std::max(acc, v);
    } else {
      for (size_t k = 0; k < 4; ++k) acc += t.weight[k] * plane[t.offset[k]];
    }
  }
  return max_mode ? acc : acc / static_cast<double>(std::max<int64_t>(count, 1));
}

Status roi_align_kernel(KernelContext& ctx) { return roi_align(ctx, run_in_order); }

// ---- AffineGrid: theta [N, 2, 3] or [N, 3, 4] and size [N, C, (D,) H, W] -> grid [N, (D,) H, W, 2 or 3] ----

// The normalised coordinate of index i of a dim of length n: pixel centres in [-1, 1]
// (align_corners 0), or the corner pixels at -1 and 1 (align_corners 1).
double grid_coordinate(int64_t i, int64_t n, bool align_corners) {
  if (align_corners) return n == 1 ? -1.0 : -1.0 + 2.0 * static_cast<double>(i) / static_cast<double>(n - 1);
  return -1.0 + (2.0 * static_cast<double>(i) + 1.0) / static_cast<double>(n);
}

Status affine_grid_rule(InferenceContext& ctx) {
  KILN_RETURN_IF_ERROR(check_input_count(ctx, 2, 2));
  KILN_RETURN_IF_ERROR(check_input_dtype<FloatTypes>(ctx, 0));
  const ir::TensorType& theta = ctx.input_type(0);
  if (theta.shape && theta.shape->rank() != 3) return ctx.error("theta must have rank 3, got " + theta.shape->to_string());
  KILN_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> size, known_int64s(ctx, 1, "size"));
  if (!size) {
    ctx.set_output_type(0, ir::TensorType{theta.dtype, std::nullopt});
    return Status::ok();
  }
  if (size->size() != 4 && size->size() != 5) return ctx.error("size must hold 4 (2-D) or 5 (3-D) values");
  const int64_t spatial = static_cast<int64_t>(size->size()) - 2;
  if (theta.shape && (*theta.shape)[1].is_static() && (*theta.shape)[2].is_static() &&
      ((*theta.shape)[1].value() != spatial || (*theta.shape)[2].value() != spatial + 1))
    return ctx.error("theta must be [N, " + std::to_string(spatial) + ", " + std::to_string(spatial + 1) + "] for " +
                     std::to_string(spatial) + "-D sizes, got " + theta.shape->to_string());
  std::vector<ir::Dim> out = {ir::Dim((*size)[0])};
  for (size_t d = 2; d < size->size(); ++d) out.emplace_back((*size)[d]);
  out.emplace_back(spatial);
  ctx.set_output_type(0, ir::TensorType{theta.dtype, ir::Shape(out)});
  return Status::ok();
}

Status affine_grid_kernel(KernelContext& ctx) { return affine_grid(ctx, run_in_order); }

// ---- DeformConv: X [N, C, H, W], W [oC, C / group, kH, kW], offset [N, offset_group * 2 * kH * kW,
// oH, oW], B [oC], mask [N, offset_group * kH * kW, oH, oW] ----

Status deform_conv_rule(InferenceContext& ctx) {
  KILN_RETURN_IF_ERROR(check_input_count(ctx, 3, 5));
  for (size_t i = 0; i < ctx.input_count(); ++i)
    if (ctx.has_input(i)) KILN_RETURN_IF_ERROR(check_input_dtype<FloatTypes>(ctx, i));
  const auto& x = ctx.input_type(0).shape;
  if (x && x->rank() != 4) return ctx.error("X must have rank 4 [N, C, H, W] (DeformConv is 2-D), got " + x->to_string());
  if (ctx.node().attr_int("offset_group", 1) <= 0) return ctx.error("offset_group must be positive");
  KILN_ASSIGN_OR_RETURN(std::optional<ir::Shape> out, conv_output_shape(ctx, ConvInputs{0, 1, 3}, false));
  ctx.set_output_type(0, ir::TensorType{ctx.input_type(0).dtype, std::move(out)});
  return Status::ok();
}

// The columns of the moved, masked taps (deformable_columns.h), then per group the product with
// the weights, as Conv's im2col does with fixed taps. In double.
Status deform_conv_kernel(KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(const DeformProblem p, deform_problem(ctx));
  const int64_t n = p.conv.batch, c = p.conv.in_channels, oc = p.conv.out_channels, group = p.conv.group;
  const int64_t taps = p.taps, positions = p.positions, image = p.height * p.width;
  const std::vector<double> xs = as_doubles(*ctx.input(0)), ws = as_doubles(*ctx.input(1)), offs = as_doubles(*ctx.input(2));
  const std::vector<double> masks = p.has_mask ? as_doubles(*ctx.input(4)) : std::vector<double>();
  const std::vector<double> bs = p.has_bias ? as_doubles(*ctx.input(3)) : std::vector<double>(static_cast<size_t>(oc), 0.0);
  const int64_t per_group = c / group, out_per_group = oc / group;
  Tensor& y = *ctx.output(0);
  std::vector<double> out(static_cast<size_t>(y.element_count()));
  std::vector<double> columns(static_cast<size_t>(c * taps * positions));
  for (int64_t b = 0; b < n; ++b) {
    const double* offsets = offs.data() + b * p.offset_groups * 2 * taps * positions;
    const double* mask = p.has_mask ? masks.data() + b * p.offset_groups * taps * positions : nullptr;
    for (int64_t ch = 0; ch < c; ++ch)
      deformable_columns(p, ch, xs.data() + (b * c + ch) * image, offsets, mask, columns.data() + ch * taps * positions);
    for (int64_t o = 0; o < oc; ++o) {
      const int64_t g = o / out_per_group;
      for (int64_t pos = 0; pos < positions; ++pos) {
        double sum = bs[static_cast<size_t>(o)];
        for (int64_t i = 0; i < per_group; ++i)
          for (int64_t t = 0; t < taps; ++t)
            sum += ws[static_cast<size_t>((o * per_group + i) * taps + t)] *
                   columns[static_cast<size_t>(((g * per_group + i) * taps + t) * positions + pos)];
        out[static_cast<size_t>((b * oc + o) * positions + pos)] = sum;
      }
    }
  }
  for (size_t i = 0; i < out.size(); ++i) store_double(y, static_cast<int64_t>(i), out[i]);
  return Status::ok();
}

}  // namespace

// grid[n, (d,) h, w] = theta[n] (x_w, y_h, (z_d,) 1): x along W, y along H, z along D. One task
// per (image, row of points along W).
Status affine_grid(KernelContext& ctx, const TaskRunner& run) {
  const Tensor& theta = *ctx.input(0);
  KILN_ASSIGN_OR_RETURN(const std::vector<int64_t> size, read_int64s(*ctx.input(1), "size"));
  const auto spatial = static_cast<int64_t>(size.size()) - 2;
  if (spatial < 2 || spatial > 3 || theta.shape() != std::vector<int64_t>{size[0], spatial, spatial + 1})
    return ctx.error("theta " + shape_to_string(theta.shape()) + " does not match size " + shape_to_string(size));
  const bool align = ctx.node().attr_int("align_corners", 0) != 0;
  const std::vector<int64_t> dims(size.begin() + 2, size.end());  // (D,) H, W
  const int64_t points = shape_element_count(dims), row = dims.back(), rows = row == 0 ? 0 : points / row;
  Tensor& grid = *ctx.output(0);
  dispatch<FloatTypes>(theta.dtype(), [&]<class T>() {
    const T* m = theta.data<T>();
    T* out = grid.data<T>();
    run(size[0] * rows, [&](int64_t task) {
      const int64_t n = task / std::max<int64_t>(rows, 1);
      std::vector<double> base(static_cast<size_t>(spatial) + 1, 1.0);  // (x, y, (z,) 1)
      for (int64_t p = (task % rows) * row; p < (task % rows + 1) * row; ++p) {
        int64_t rest = p;
        for (int64_t k = spatial; k-- > 0;) {  // dims are (D,) H, W; base is x (W), y (H), z (D)
          const int64_t length = dims[static_cast<size_t>(k)];
          base[static_cast<size_t>(spatial - 1 - k)] = grid_coordinate(rest % length, length, align);
          rest /= length;
        }
        for (int64_t r = 0; r < spatial; ++r) {
          double v = 0;
          for (int64_t c = 0; c <= spatial; ++c) v += load(m[(n * spatial + r) * (spatial + 1) + c]) * base[static_cast<size_t>(c)];
          out[(n * points + p) * spatial + r] = store<T>(v);
        }
      }
    });
  });
  return Status::ok();
}

Result<DeformProblem> deform_problem(const KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  const Tensor& w = *ctx.input(1);
  const Tensor& offset = *ctx.input(2);
  const Tensor* bias = ctx.input(3);
  const Tensor* mask = ctx.input(4);
  const Tensor& y = *ctx.output(0);
  DeformProblem p;
  KILN_ASSIGN_OR_RETURN(p.conv, conv_problem(ctx.node(), x.shape(), w.shape(), y.shape(), false));
  p.height = x.shape()[2];
  p.width = x.shape()[3];
  p.kernel_w = w.shape()[3];
  p.taps = w.shape()[2] * p.kernel_w;
  p.out_w = y.shape()[3];
  p.positions = y.shape()[2] * p.out_w;
  p.offset_groups = ctx.node().attr_int("offset_group", 1);
  p.has_mask = mask != nullptr;
  p.has_bias = bias != nullptr;
  const int64_t n = p.conv.batch, oh = y.shape()[2];
  if (p.conv.in_channels % p.offset_groups != 0) return ctx.error("C is not a multiple of offset_group");
  if (offset.shape() != std::vector<int64_t>{n, p.offset_groups * 2 * p.taps, oh, p.out_w})
    return ctx.error("offset must have shape [N, offset_group * 2 * kH * kW, oH, oW], got " + shape_to_string(offset.shape()));
  if (mask && mask->shape() != std::vector<int64_t>{n, p.offset_groups * p.taps, oh, p.out_w})
    return ctx.error("mask must have shape [N, offset_group * kH * kW, oH, oW], got " + shape_to_string(mask->shape()));
  if (bias && bias->element_count() != p.conv.out_channels) return ctx.error("B must hold one value per output channel");
  return p;
}

Status grid_sample(KernelContext& ctx, const TaskRunner& run) {
  KILN_ASSIGN_OR_RETURN(const GridSampleAttrs a, grid_sample_attrs(ctx.node()));
  const Tensor& x = *ctx.input(0);
  const Tensor& grid_tensor = *ctx.input(1);
  Tensor& y = *ctx.output(0);
  const std::vector<int64_t>& xs = x.shape();
  const size_t rank = xs.size() - 2;
  const std::vector<int64_t> spatial(xs.begin() + 2, xs.end());
  const int64_t batch = xs[0], channels = xs[1], map_size = dims_product(xs, 2, xs.size());
  const int64_t points = dims_product(y.shape(), 2, y.shape().size());
  // Each point's pixel coordinates, outermost dim first (the grid lists them innermost first:
  // (x, y, z...) for dims (..., z, y, x)), computed once for every channel.
  const std::vector<double> grid = as_doubles(grid_tensor);
  std::vector<double> positions(static_cast<size_t>(batch * points) * rank);
  for (int64_t p = 0; p < batch * points; ++p)
    for (size_t d = 0; d < rank; ++d)
      positions[static_cast<size_t>(p) * rank + d] =
          unnormalize(grid[static_cast<size_t>(p) * rank + rank - 1 - d], spatial[d], a.align_corners);
  dispatch<FloatTypes>(x.dtype(), [&]<class T>() {
    const T* in = x.data<T>();
    T* out = y.data<T>();
    run(batch * channels, [&](int64_t plane) {  // one (image, channel) map per task
      std::vector<double> values(static_cast<size_t>(map_size)), position(rank);
      for (int64_t i = 0; i < map_size; ++i) values[static_cast<size_t>(i)] = load(in[plane * map_size + i]);
      const SpatialMap m{values.data(), spatial};
      const double* p = positions.data() + static_cast<size_t>((plane / channels) * points) * rank;
      for (int64_t i = 0; i < points; ++i) {
        position.assign(p + static_cast<size_t>(i) * rank, p + static_cast<size_t>(i + 1) * rank);
        out[plane * points + i] = from_double<T>(grid_sample_at(m, position, a));
      }
    });
  });
  return Status::ok();
}

Status roi_align(KernelContext& ctx, const TaskRunner& run) {
  KILN_ASSIGN_OR_RETURN(const RoiAlignAttrs a, roi_align_attrs(ctx.node()));
  const Tensor& x = *ctx.input(0);
  KILN_ASSIGN_OR_RETURN(const std::vector<int64_t> batch_indices, read_int64s(*ctx.input(2), "batch_indices"));
  const std::vector<double> rois = as_doubles(*ctx.input(1));
  Tensor& y = *ctx.output(0);
  const std::vector<int64_t>& xs = x.shape();
  const int64_t channels = xs[1], plane = xs[2] * xs[3], bins = a.height * a.width, roi_count = y.shape()[0];
  if (static_cast<int64_t>(rois.size()) != roi_count * 4 || static_cast<int64_t>(batch_indices.size()) != roi_count)
    return ctx.error("rois and batch_indices must describe the same number of rois");
  // Every roi's taps first (and its errors), then one task per (roi, channel).
  std::vector<RoiSamples> samples;
  for (int64_t r = 0; r < roi_count; ++r) {
    const int64_t b = batch_indices[static_cast<size_t>(r)];
    if (b < 0 || b >= xs[0]) return ctx.error("batch index " + std::to_string(b) + " out of range for batch " + std::to_string(xs[0]));
    const double* roi = rois.data() + r * 4;
    KILN_ASSIGN_OR_RETURN(RoiSamples s, roi_samples(ctx, a, {roi[0], roi[1], roi[2], roi[3]}, xs[2], xs[3]));
    samples.push_back(std::move(s));
  }
  const std::vector<double> in = as_doubles(x);
  std::vector<double> out(static_cast<size_t>(y.element_count()));
  run(roi_count * channels, [&](int64_t task) {
    const int64_t r = task / channels, c = task % channels, b = batch_indices[static_cast<size_t>(r)];
    const RoiSamples& s = samples[static_cast<size_t>(r)];
    for (int64_t bin = 0; bin < bins; ++bin)
      out[static_cast<size_t>(task * bins + bin)] =
          pool_bin(in.data() + (b * channels + c) * plane, s.taps.data() + bin * s.per_bin, s.per_bin, a.max_mode);
  });
  store_doubles(out, y);
  return Status::ok();
}

void register_sampling_ops(OpRegistry& r) {
  r.add({"", "GridSample", 16, grid_sample_rule, grid_sample_kernel});
  r.add({"", "GridSample", 20, grid_sample_rule, grid_sample_kernel});
  r.add({"", "AffineGrid", 20, affine_grid_rule, affine_grid_kernel});
  r.add({"", "DeformConv", 19, deform_conv_rule, deform_conv_kernel});
  for (int v : {10, 16}) r.add({"", "RoiAlign", v, roi_align_rule, roi_align_kernel});
}

}  // namespace kiln::ops
