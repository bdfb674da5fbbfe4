// Op family resize: Resize (opsets 10, 11, 13, 18, 19) and Upsample (7, 9). Each axis maps output
// coordinates to input coordinates (coordinate_transformation_mode), then to weighted input taps
// (nearest, linear or cubic; from opset 18, linear and cubic filters stretched by 1 / scale when
// downscaling with antialias); an output element is the sum over the product of its axes' taps.
// Opset 18 also lets scales, sizes and roi name a subset of the axes (`axes`) and keeps the aspect
// ratio of sized axes (keep_aspect_ratio_policy); opset 19 adds half_pixel_symmetric.
#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <optional>

#include "kiln/ops/data_movement.h"
#include "kiln/ops/interpolation.h"
#include "kiln/ops/op_families.h"
#include "kiln/ops/op_helpers.h"
#include "kiln/ops/op_registry.h"
#include "kiln/ops/resize.h"

namespace kiln::ops {
namespace {

// Where each operand lives for this op and opset; -1 when the form has no such input.
struct ResizeInputs {
  int roi = -1, scales = -1, sizes = -1;
};

ResizeInputs resize_inputs(const ir::Node& node) {
  if (node.op_type == "Upsample") return {-1, node.opset_version >= 9 ? 1 : -1, -1};
  if (node.opset_version < 11) return {-1, 1, -1};
  return {1, 2, 3};
}

// Options for the interpolation. Resize-10 and Upsample use asymmetric coordinates and floor.
struct ResizeMode {
  std::string mode, transform, nearest;
  double cubic_a = -0.75, extrapolation = 0.0;
  bool exclude_outside = false;
  bool antialias = false;                  // opset 18
  std::string aspect_policy = "stretch";  // opset 18: keep_aspect_ratio_policy
  std::vector<int64_t> axes;               // opset 18: the axes scales, sizes and roi refer to (empty: all)
};

bool one_of(const std::string& s, std::initializer_list<const char*> options) {
  for (const char* o : options)
    if (s == o) return true;
  return false;
}

Result<ResizeMode> resize_mode(const ir::Node& node) {
  ResizeMode m;
  m.mode = node.attr_string("mode", "nearest");
  if (m.mode == "bilinear") m.mode = "linear";  // Upsample-7 spelling
  const bool modern = node.op_type == "Resize" && node.opset_version >= 11;
  m.transform = modern ? node.attr_string("coordinate_transformation_mode", "half_pixel") : "asymmetric";
  m.nearest = modern ? node.attr_string("nearest_mode", "round_prefer_floor") : "floor";
  m.cubic_a = node.attr_float("cubic_coeff_a", -0.75f);
  m.extrapolation = node.attr_float("extrapolation_value", 0.0f);
  m.exclude_outside = node.attr_int("exclude_outside", 0) != 0;
  if (node.op_type == "Resize" && node.opset_version >= 18) {
    m.antialias = node.attr_int("antialias", 0) != 0;
    m.aspect_policy = node.attr_string("keep_aspect_ratio_policy", "stretch");
    m.axes = node.attr_ints("axes");
  }
  const std::string who = node.describe() + ": ";
  if (!one_of(m.aspect_policy, {"stretch", "not_larger", "not_smaller"}))
    return invalid_model(who + "unknown keep_aspect_ratio_policy '" + m.aspect_policy + "'");
  const bool symmetric_ok = node.op_type == "Resize" && node.opset_version >= 19;
  if (m.transform == "half_pixel_symmetric" && !symmetric_ok)
    return invalid_model(who + "coordinate_transformation_mode half_pixel_symmetric needs opset 19");
  if (m.mode != "nearest" && m.mode != "linear" && (m.mode != "cubic" || !modern))
    return invalid_model(who + "unsupported mode '" + m.mode + "'");
  if (!one_of(m.transform, {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric", "tf_half_pixel_for_nn",
                            "tf_crop_and_resize", "half_pixel_symmetric"}))
    return invalid_model(who + "unknown coordinate_transformation_mode '" + m.transform + "'");
  if (!one_of(m.nearest, {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"}))
    return invalid_model(who + "unknown nearest_mode '" + m.nearest + "'");
  return m;
}

// A float/int input that is present and non-empty ("" and empty tensors both mean absent).
const Tensor* present(const Tensor* t) { return t && t->element_count() > 0 ? t : nullptr; }

// The axes scales, sizes and roi refer to, each in [0, rank): `axes`, or all of them.
Result<std::vector<size_t>> target_axes(const ir::Node& node, const ResizeMode& m, size_t rank) {
  std::vector<size_t> axes;
  if (m.axes.empty()) {
    for (size_t d = 0; d < rank; ++d) axes.push_back(d);
    return axes;
  }
  std::vector<bool> seen(rank, false);
  for (int64_t a : m.axes) {
    KILN_ASSIGN_OR_RETURN(const int64_t d, normalize_axis(a, static_cast<int64_t>(rank)));
    if (seen[static_cast<size_t>(d)]) return invalid_model(node.describe() + ": axis " + std::to_string(a) + " is repeated in axes");
    seen[static_cast<size_t>(d)] = true;
    axes.push_back(static_cast<size_t>(d));
  }
  return axes;
}

// Scales or sizes for every axis: one of them, spread over the rank from the axes they name
// (scale 1, or size -1 meaning the input's, elsewhere).
struct ResizeTarget {
  std::vector<float> scales;
  std::vector<int64_t> sizes;
};

Result<ResizeTarget> resize_target(const ir::Node& node, const ResizeMode& m, const Tensor* scales, const Tensor* sizes,
                                   size_t rank) {
  ResizeTarget given;
  const std::string who = node.describe() + ": ";
  KILN_ASSIGN_OR_RETURN(const std::vector<size_t> axes, target_axes(node, m, rank));
  if (node.op_type == "Upsample" && node.opset_version < 9) {
    given.scales = node.attr_floats("scales");
  } else if (present(sizes)) {
    if (present(scales)) return invalid_model(who + "scales and sizes must not both be given");
    KILN_ASSIGN_OR_RETURN(given.sizes, read_int64s(*sizes, "sizes"));
    if (given.sizes.size() != axes.size())
      return invalid_model(who + "sizes has " + std::to_string(given.sizes.size()) + " values for " + std::to_string(axes.size()) + " axes");
    for (int64_t n : given.sizes)
      if (n < 0) return invalid_model(who + "sizes must not be negative");
    ResizeTarget t;
    t.sizes.assign(rank, -1);
    for (size_t i = 0; i < axes.size(); ++i) t.sizes[axes[i]] = given.sizes[i];
    return t;
  } else if (present(scales)) {
    KILN_ASSIGN_OR_RETURN(given.scales, read_floats(*scales, "scales"));
  } else {
    return invalid_model(who + "needs scales or sizes");
  }
  if (given.scales.size() != axes.size())
    return invalid_model(who + "scales has " + std::to_string(given.scales.size()) + " values for " + std::to_string(axes.size()) + " axes");
  for (float s : given.scales)
    if (!(s > 0)) return invalid_model(who + "scales must be positive");
  ResizeTarget t;
  t.scales.assign(rank, 1.0f);
  for (size_t i = 0; i < axes.size(); ++i) t.scales[axes[i]] = given.scales[i];
  return t;
}

// One axis of a resize whose input dims are known: output length, the scale its coordinates use,
// and the output length as the spec's formulas use it (`resized`: in * scale, not floored, when a
// scale decides it; the size when a size does).
struct AxisPlan {
  int64_t out = 0;
  double scale = 1, resized = 0;
};

// Sized axes under keep_aspect_ratio_policy not_larger / not_smaller share one scale, the smallest
// / largest of size / input over the non-empty axes, and their lengths are round_half_up(scale * input).
std::vector<AxisPlan> axis_lengths(const ResizeMode& m, const ResizeTarget& t, const std::vector<int64_t>& in) {
  std::vector<AxisPlan> plan(in.size());
  if (t.sizes.empty()) {
    for (size_t d = 0; d < in.size(); ++d) {
      plan[d].scale = t.scales[d];
      plan[d].resized = static_cast<double>(in[d]) * plan[d].scale;
      plan[d].out = static_cast<int64_t>(std::floor(static_cast<double>(in[d]) * static_cast<double>(t.scales[d])));
    }
    return plan;
  }
  std::optional<double> shared;
  if (m.aspect_policy != "stretch")
    for (size_t d = 0; d < in.size(); ++d) {
      if (t.sizes[d] < 0 || in[d] == 0) continue;
      const double ratio = static_cast<double>(t.sizes[d]) / static_cast<double>(in[d]);
      shared = !shared ? ratio : m.aspect_policy == "not_larger" ? std::min(*shared, ratio) : std::max(*shared, ratio);
    }
  for (size_t d = 0; d < in.size(); ++d) {
    AxisPlan& a = plan[d];
    if (t.sizes[d] < 0) {
      a = {in[d], 1.0, static_cast<double>(in[d])};
    } else if (shared) {
      a.scale = *shared;
      a.resized = static_cast<double>(in[d]) * *shared;
      a.out = static_cast<int64_t>(std::floor(a.resized + 0.5));
    } else {
      a.out = t.sizes[d];
      a.scale = static_cast<double>(a.out) / static_cast<double>(in[d]);
      a.resized = static_cast<double>(a.out);
    }
  }
  return plan;
}

// The plan of every axis of an input of dims `in`. An empty input axis has nothing to interpolate
// from: sizing it to a non-empty length is not defined (and its taps would read out of bounds).
Result<std::vector<AxisPlan>> plan_axes(const ir::Node& node, const ResizeMode& m, const ResizeTarget& t,
                                        const std::vector<int64_t>& in) {
  std::vector<AxisPlan> plan = axis_lengths(m, t, in);
  for (size_t d = 0; d < in.size(); ++d)
    if (in[d] == 0 && plan[d].out != 0)
      return invalid_argument(node.describe() + ": axis " + std::to_string(d) + " is empty and cannot be resized to " +
                              std::to_string(plan[d].out));
  return plan;
}

Status resize_infer(InferenceContext& ctx) {
  const ir::TensorType& x = ctx.input_type(0);
  KILN_RETURN_IF_ERROR(resize_mode(ctx.node()).status());
  if (!x.shape) {
    ctx.set_output_type(0, typed_like(x, std::nullopt));
    return Status::ok();
  }
  const ResizeInputs in = resize_inputs(ctx.node());
  // An operand is usable when its value is known, or when it is known to be empty.
  auto known = [&](int i, bool& unknown) -> const Tensor* {
    if (i < 0 || !ctx.has_input(static_cast<size_t>(i))) return nullptr;
    if (const Tensor* v = ctx.input_value(static_cast<size_t>(i))) return v;
    const auto& s = ctx.input_type(static_cast<size_t>(i)).shape;
    unknown = unknown || !(s && s->is_static() && shape_element_count(s->static_dims()) == 0);
    return nullptr;
  };
  bool unknown = false;
  const Tensor* scales = known(in.scales, unknown);
  const Tensor* sizes = known(in.sizes, unknown);
  if (unknown) {
    ctx.set_output_type(0, typed_like(x, unknown_shape(x.shape->rank())));
    return Status::ok();
  }
  KILN_ASSIGN_OR_RETURN(const ResizeMode m, resize_mode(ctx.node()));
  Result<ResizeTarget> target = resize_target(ctx.node(), m, scales, sizes, x.shape->rank());
  if (!target.is_ok()) return target.status();
  ir::Shape out = *x.shape;
  if (x.shape->is_static()) {
    KILN_ASSIGN_OR_RETURN(const std::vector<AxisPlan> plan, plan_axes(ctx.node(), m, *target, x.shape->static_dims()));
    for (size_t d = 0; d < out.rank(); ++d) out.dims()[d] = plan[d].out;
    ctx.set_output_type(0, typed_like(x, out));
    return Status::ok();
  }
  const bool shared_scale = !target->sizes.empty() && m.aspect_policy != "stretch";
  for (size_t d = 0; d < out.rank(); ++d) {
    ir::Dim& dim = out.dims()[d];
    if (!target->sizes.empty()) {
      if (target->sizes[d] >= 0) dim = shared_scale ? ir::Dim::unknown() : ir::Dim(target->sizes[d]);
    } else if (dim.is_static()) {
      dim = static_cast<int64_t>(std::floor(dim.value() * static_cast<double>(target->scales[d])));
    } else if (target->scales[d] != 1.0f) {
      dim = ir::Dim::unknown();
    }
  }
  ctx.set_output_type(0, typed_like(x, out));
  return Status::ok();
}

// ---- kernel ----

// Input coordinate of output coordinate x. `resized` is the output length as the spec's formulas
// use it: in * scale when scales are given (not floored, as ONNX's test data expects), else out.
double source_coordinate(const ResizeMode& m, double x, double scale, int64_t in, double resized, int64_t out,
                         double roi_start, double roi_end) {
  const double span = static_cast<double>(in - 1);
  if (m.transform == "half_pixel") return (x + 0.5) / scale - 0.5;
  if (m.transform == "half_pixel_symmetric") {
    // half_pixel about the centre of the input, when the output length was rounded.
    const double offset = static_cast<double>(in) / 2 * (1 - static_cast<double>(out) / resized);
    return offset + (x + 0.5) / scale - 0.5;
  }
  if (m.transform == "pytorch_half_pixel") return resized > 1 ? (x + 0.5) / scale - 0.5 : 0.0;
  if (m.transform == "align_corners") return resized == 1 ? 0.0 : x * span / (resized - 1);
  if (m.transform == "tf_half_pixel_for_nn") return (x + 0.5) / scale;
  if (m.transform == "tf_crop_and_resize")
    return resized > 1 ? roi_start * span + x * (roi_end - roi_start) * span / (resized - 1)
                       : 0.5 * (roi_start + roi_end) * span;
  return x / scale;  // asymmetric
}

int64_t nearest_index(const std::string& mode, double x) {
  const double f = std::floor(x);
  if (mode == "floor") return static_cast<int64_t>(f);
  if (mode == "ceil") return static_cast<int64_t>(std::ceil(x));
  if (x - f == 0.5) return static_cast<int64_t>(mode == "round_prefer_floor" ? f : f + 1);
  return static_cast<int64_t>(std::round(x));
}

// Linear or cubic taps for downscaling with antialias: the filter stretched by 1 / scale (more
// inputs per output), its weights normalised to sum to one. Taps at base + j, where base is the
// input just left of x (x itself counts as right) and j runs over the stretched footprint.
void antialias_taps(const ResizeMode& m, double x, double scale, int64_t in, AxisTaps& taps) {
  const double floor_x = std::floor(x);
  const auto base = static_cast<int64_t>(floor_x) - (x == floor_x ? 1 : 0);
  const double ratio = x - static_cast<double>(base);
  const bool linear = m.mode == "linear";
  const auto first = static_cast<int64_t>(std::floor((linear ? -1.0 : -2.0) / scale)) + 1;
  const int64_t last = 2 - first;  // one past the last
  std::vector<double> w;
  double total = 0;
  for (int64_t j = first; j < last; ++j) {
    const double s = scale * (static_cast<double>(j) - ratio);
    double weight = linear ? std::max(0.0, 1.0 - std::fabs(s)) : cubic_kernel(m.cubic_a, s);
    const int64_t i = base + j;
    if (m.exclude_outside && (i < 0 || i >= in)) weight = 0;
    w.push_back(weight);
    total += weight;
  }
  for (int64_t j = first; j < last; ++j) {
    const double weight = w[static_cast<size_t>(j - first)];
    if (weight == 0) continue;
    taps.index.push_back(std::clamp<int64_t>(base + j, 0, in - 1));
    taps.weight.push_back(weight / total);
  }
}

AxisTaps axis_taps(const ResizeMode& m, int64_t o, const AxisPlan& axis, int64_t in, double roi_start, double roi_end) {
  AxisTaps taps;
  const double scale = axis.scale;
  const double x = source_coordinate(m, static_cast<double>(o), scale, in, axis.resized, axis.out, roi_start, roi_end);
  if (m.transform == "tf_crop_and_resize" && (x < 0 || x > static_cast<double>(in - 1))) {
    taps.outside = true;
    return taps;
  }
  auto clamp = [in](int64_t i) { return std::clamp<int64_t>(i, 0, in - 1); };
  if (m.mode == "nearest") {
    taps.index = {clamp(nearest_index(m.nearest, x))};
    taps.weight = {1.0};
    return taps;
  }
  if (m.antialias && scale < 1) {
    antialias_taps(m, x, scale, in, taps);
    return taps;
  }
  const int64_t base = static_cast<int64_t>(std::floor(x));
  const double t = x - static_cast<double>(base);
  std::vector<double> w = m.mode == "linear" ? std::vector<double>{1 - t, t} : cubic_weights(m.cubic_a, t);
  const int64_t first = m.mode == "linear" ? base : base - 1;
  double total = 0;
  for (size_t k = 0; k < w.size(); ++k) {
    const int64_t i = first + static_cast<int64_t>(k);
    if (m.exclude_outside && (i < 0 || i >= in)) w[k] = 0;
    total += w[k];
  }
  for (size_t k = 0; k < w.size(); ++k) {
    if (w[k] == 0) continue;
    taps.index.push_back(clamp(first + static_cast<int64_t>(k)));
    taps.weight.push_back(m.exclude_outside ? w[k] / total : w[k]);
  }
  return taps;
}

}  // namespace

Result<std::vector<std::vector<AxisTaps>>> resize_taps(KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  const Tensor& y = *ctx.output(0);
  KILN_ASSIGN_OR_RETURN(ResizeMode m, resize_mode(ctx.node()));
  const ResizeInputs in = resize_inputs(ctx.node());
  auto input = [&](int i) { return i < 0 ? nullptr : ctx.input(static_cast<size_t>(i)); };
  const size_t rank = x.shape().size();
  KILN_ASSIGN_OR_RETURN(ResizeTarget target, resize_target(ctx.node(), m, input(in.scales), input(in.sizes), rank));
  KILN_ASSIGN_OR_RETURN(const std::vector<AxisPlan> plan, plan_axes(ctx.node(), m, target, x.shape()));
  std::vector<float> roi(2 * rank, 0.0f);
  for (size_t d = 0; d < rank; ++d) roi[rank + d] = 1.0f;
  if (const Tensor* r = present(input(in.roi)); r && m.transform == "tf_crop_and_resize") {
    KILN_ASSIGN_OR_RETURN(const std::vector<float> given, read_floats(*r, "roi"));
    KILN_ASSIGN_OR_RETURN(const std::vector<size_t> named, target_axes(ctx.node(), m, rank));
    if (given.size() != 2 * named.size()) return ctx.error("roi must have 2 values per resized axis");
    for (size_t i = 0; i < named.size(); ++i) {
      roi[named[i]] = given[i];
      roi[rank + named[i]] = given[named.size() + i];
    }
  }
  std::vector<std::vector<AxisTaps>> axes(rank);
  for (size_t d = 0; d < rank; ++d) {
    if (plan[d].out != y.shape()[d]) return ctx.error("output dim " + std::to_string(d) + " is not the resized length");
    for (int64_t o = 0; o < plan[d].out; ++o) axes[d].push_back(axis_taps(m, o, plan[d], x.shape()[d], roi[d], roi[rank + d]));
  }
  return axes;
}

namespace {

Status resize_kernel(KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  Tensor& y = *ctx.output(0);
  KILN_ASSIGN_OR_RETURN(ResizeMode m, resize_mode(ctx.node()));
  KILN_ASSIGN_OR_RETURN(const std::vector<std::vector<AxisTaps>> axes, resize_taps(ctx));
  const size_t rank = x.shape().size();
  const std::vector<int64_t> strides = contiguous_strides(x.shape());
  bool supported = false;
  visit_dtype(x.dtype(), [&]<class T>() {
    if constexpr (!std::is_same_v<T, std::string> && !std::is_same_v<T, bool>) {
      supported = true;
      const T* src = x.data<T>();
      T* dst = y.data<T>();
      // Sum over the product of the axes' taps, axis by axis.
      auto sample = [&](auto&& self, const std::vector<int64_t>& idx, size_t d, int64_t offset) -> double {
        if (d == rank) return to_double(src[offset]);
        const AxisTaps& t = axes[d][idx[d]];
        double sum = 0;
        for (size_t k = 0; k < t.index.size(); ++k)
          sum += t.weight[k] * self(self, idx, d + 1, offset + t.index[k] * strides[d]);
        return sum;
      };
      for_each_index(y.shape(), [&](const std::vector<int64_t>& idx, int64_t i) {
        bool outside = false;
        for (size_t d = 0; d < rank; ++d) outside = outside || axes[d][idx[d]].outside;
        dst[i] = from_double<T>(outside ? m.extrapolation : sample(sample, idx, 0, 0));
      });
    }
  });
  if (!supported) return ctx.error(std::string("unsupported element type ") + dtype_name(x.dtype()));
  return Status::ok();
}

}  // namespace

void register_resize_ops(OpRegistry& r) {
  for (int v : {10, 11, 13, 18, 19}) r.add({"", "Resize", v, with_required_inputs(v == 10 ? 2 : 1, resize_infer), resize_kernel});
  for (int v : {7, 9}) r.add({"", "Upsample", v, with_required_inputs(v == 9 ? 2 : 1, resize_infer), resize_kernel});
}

}  // namespace kiln::ops
