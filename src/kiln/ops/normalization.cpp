// Normalisations: LayerNormalization, BatchNormalization (every version; inference, plus the
// training form of opset 14+), InstanceNormalization, GroupNormalization (18, 21), LpNormalization,
// MeanVarianceNormalization.
// Statistics are computed in double with two passes (mean, then squared deviations).
#include <algorithm>
#include <cmath>
#include <vector>

#include "kiln/ops/elementwise_broadcast.h"
#include "kiln/ops/data_movement.h"
#include "kiln/ops/family_support.h"
#include "kiln/ops/local_normalizations.h"
#include "kiln/ops/mean_variance_normalization.h"
#include "kiln/ops/group_normalization.h"
#include "kiln/ops/op_families.h"
#include "kiln/ops/op_helpers.h"

namespace kiln::ops {
namespace {

// A floating tensor's values as doubles.
template <class T>
void write_doubles(const std::vector<double>& values, Tensor& t) {
  for (size_t i = 0; i < values.size(); ++i) t.data<T>()[i] = store<T>(values[i]);
}

void write_doubles(const std::vector<double>& values, Tensor* t) {
  if (t) dispatch<FloatTypes>(t->dtype(), [&]<class T>() { write_doubles<T>(values, *t); });
}

struct Moments {
  double mean = 0, var = 0;  // population variance
};

// Mean and variance of n values `stride` apart.
template <class T>
Moments moments(const T* x, int64_t n, int64_t stride) {
  Moments m;
  for (int64_t i = 0; i < n; ++i) m.mean += load(x[i * stride]);
  m.mean /= static_cast<double>(n);
  for (int64_t i = 0; i < n; ++i) {
    const double d = load(x[i * stride]) - m.mean;
    m.var += d * d;
  }
  m.var /= static_cast<double>(n);
  return m;
}

Status float_inputs_rule(InferenceContext& ctx, size_t required, size_t max_inputs) {
  KILN_RETURN_IF_ERROR(check_input_count(ctx, required, max_inputs));
  for (size_t i = 0; i < ctx.input_count(); ++i)
    if (ctx.has_input(i)) KILN_RETURN_IF_ERROR(check_input_dtype<FloatTypes>(ctx, i));
  ctx.set_output_type(0, ctx.input_type(0));
  return Status::ok();
}

// ---- LayerNormalization ----

Status layer_norm_rule(InferenceContext& ctx) {
  KILN_RETURN_IF_ERROR(float_inputs_rule(ctx, 2, 3));
  const int64_t stash = ctx.node().attr_int("stash_type", 1);
  if (stash != static_cast<int64_t>(DType::kFloat) && stash != static_cast<int64_t>(DType::kBFloat16) &&
      stash != static_cast<int64_t>(DType::kDouble))
    return ctx.error("stash_type " + std::to_string(stash) + " is not a floating-point type");
  const ir::TensorType& x = ctx.input_type(0);
  ir::TensorType stats{static_cast<DType>(stash), std::nullopt};
  if (x.shape) {
    const int64_t rank = static_cast<int64_t>(x.shape->rank());
    auto axis = normalize_axis(ctx.node().attr_int("axis", -1), rank);
    if (!axis.is_ok()) return ctx.error(axis.status().message());
    std::vector<ir::Dim> dims = x.shape->dims();
    for (int64_t d = axis.value(); d < rank; ++d) dims[static_cast<size_t>(d)] = ir::Dim(1);
    stats.shape = ir::Shape(std::move(dims));
    const ir::Shape normalized(std::vector<ir::Dim>(x.shape->dims().begin() + axis.value(), x.shape->dims().end()));
    for (size_t i = 1; i < ctx.input_count(); ++i) {
      if (!ctx.has_input(i) || !ctx.input_type(i).shape) continue;
      auto b = broadcast_shapes(normalized, *ctx.input_type(i).shape);
      if (!b.is_ok() || b.value().rank() != normalized.rank())
        return ctx.error("input " + std::to_string(i) + " of shape " + ctx.input_type(i).shape->to_string() +
                         " does not broadcast to the normalized shape " + normalized.to_string());
    }
  }
  ctx.set_output_type(1, stats);
  ctx.set_output_type(2, stats);
  return Status::ok();
}

Status layer_norm_kernel(KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  auto axis = normalize_axis(ctx.node().attr_int("axis", -1), x.rank());
  if (!axis.is_ok()) return ctx.error(axis.status().message());
  const std::vector<int64_t> normalized(x.shape().begin() + axis.value(), x.shape().end());
  const int64_t n = shape_element_count(normalized), outer = n == 0 ? 0 : x.element_count() / n;
  const std::vector<double> scale = broadcast_doubles(ctx.input(1), normalized, 1.0);
  const std::vector<double> bias = broadcast_doubles(ctx.input(2), normalized, 0.0);
  if (scale.empty() || bias.empty()) return ctx.error("Scale or B does not broadcast to the normalized shape");
  const double epsilon = ctx.node().attr_float("epsilon", 1e-5f);
  std::vector<double> means(static_cast<size_t>(outer)), inv_std(static_cast<size_t>(outer));
  dispatch<FloatTypes>(x.dtype(), [&]<class T>() {
    const T* in = x.data<T>();
    T* out = ctx.output(0)->data<T>();
#pragma omp parallel for if (x.element_count() > (1 << 16))
    for (int64_t o = 0; o < outer; ++o) {
      const Moments m = moments(in + o * n, n, 1);
      const double inv = 1.0 / std::sqrt(m.var + epsilon);
      for (int64_t i = 0; i < n; ++i)
        out[o * n + i] = store<T>((load(in[o * n + i]) - m.mean) * inv * scale[static_cast<size_t>(i)] + bias[static_cast<size_t>(i)]);
      means[static_cast<size_t>(o)] = m.mean;
      inv_std[static_cast<size_t>(o)] = inv;
    }
  });
  write_doubles(means, ctx.output(1));
  write_doubles(inv_std, ctx.output(2));
  return Status::ok();
}

// ---- BatchNormalization ----

// Per-statistic layout: the stat of element i (within a sample of `per_sample` elements) is
// (i / repeat) % count. Spatial: count = C, repeat = spatial size; non-spatial (opset < 9,
// spatial=0): one stat per (channel, position).
struct StatLayout {
  int64_t count = 1, repeat = 1;
};

StatLayout stat_layout(const ir::Node& node, const std::vector<int64_t>& x_shape) {
  const int64_t c = x_shape.size() > 1 ? x_shape[1] : 1;
  const int64_t spatial = x_shape.size() > 2 ? shape_element_count({x_shape.begin() + 2, x_shape.end()}) : 1;
  if (node.opset_version < 9 && node.attr_int("spatial", 1) == 0) return {c * spatial, 1};
  return {c, spatial};
}

bool training(const ir::Node& node) { return node.opset_version >= 14 && node.attr_int("training_mode", 0) != 0; }

Status batch_norm_rule(InferenceContext& ctx) {
  KILN_RETURN_IF_ERROR(float_inputs_rule(ctx, 5, 5));
  const ir::TensorType& x = ctx.input_type(0);
  if (x.shape && x.shape->rank() < 2) return ctx.error("X must have rank >= 2, got " + x.shape->to_string());
  if (ctx.opset() >= 14 && !training(ctx.node()) && ctx.output_count() > 1)
    return ctx.error("outputs running_mean and running_var need training_mode=1");
  if (x.has_static_shape()) {
    const int64_t count = stat_layout(ctx.node(), x.shape->static_dims()).count;
    for (size_t i = 1; i < 5; ++i) {
      const ir::TensorType& t = ctx.input_type(i);
      if (t.has_static_shape() && shape_element_count(t.shape->static_dims()) != count)
        return ctx.error("input " + std::to_string(i) + " has shape " + t.shape->to_string() + ", expected " +
                         std::to_string(count) + " elements");
    }
  }
  // Outputs 1, 3 carry the mean (typed as input 3), outputs 2, 4 the variance (typed as input 4).
  for (size_t i = 1; i < ctx.output_count(); ++i) ctx.set_output_type(i, ctx.input_type(3 + (i - 1) % 2));
  return Status::ok();
}

// Mean and population variance of stat c over the batch and its `repeat` positions per sample.
template <class T>
Moments batch_moments(const T* in, int64_t batch, int64_t per_sample, int64_t repeat, int64_t c) {
  Moments m;
  const double n = static_cast<double>(batch * repeat);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < repeat; ++i) m.mean += load(in[b * per_sample + c * repeat + i]) / n;
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < repeat; ++i) {
      const double d = load(in[b * per_sample + c * repeat + i]) - m.mean;
      m.var += d * d / n;
    }
  return m;
}

Status batch_norm_kernel(KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  const StatLayout layout = stat_layout(ctx.node(), x.shape());
  const std::vector<double> scale = as_doubles(*ctx.input(1)), bias = as_doubles(*ctx.input(2));
  std::vector<double> mean = as_doubles(*ctx.input(3)), var = as_doubles(*ctx.input(4));
  for (size_t size : {scale.size(), bias.size(), mean.size(), var.size()})
    if (static_cast<int64_t>(size) != layout.count)
      return ctx.error("statistics need " + std::to_string(layout.count) + " elements, got " + std::to_string(size));
  const double epsilon = ctx.node().attr_float("epsilon", 1e-5f);
  const double momentum = ctx.node().attr_float("momentum", 0.9f);
  const int64_t per_sample = layout.count * layout.repeat;
  const int64_t batch = per_sample == 0 ? 0 : x.element_count() / per_sample;
  dispatch<FloatTypes>(x.dtype(), [&]<class T>() {
    const T* in = x.data<T>();
    T* out = ctx.output(0)->data<T>();
    // y = x * mul + add per stat; training uses the batch's statistics and blends them into the
    // running ones (mean = mean * momentum + batch_mean * (1 - momentum)).
    std::vector<double> mul(scale.size()), add(scale.size());
    for (size_t s = 0; s < scale.size(); ++s) {
      Moments m{mean[s], var[s]};
      if (training(ctx.node())) {
        m = batch_moments(in, batch, per_sample, layout.repeat, static_cast<int64_t>(s));
        mean[s] = mean[s] * momentum + m.mean * (1 - momentum);
        var[s] = var[s] * momentum + m.var * (1 - momentum);
      }
      mul[s] = scale[s] / std::sqrt(m.var + epsilon);
      add[s] = bias[s] - m.mean * mul[s];
    }
#pragma omp parallel for if (x.element_count() > (1 << 16))
    for (int64_t e = 0; e < x.element_count(); ++e) {
      const auto s = static_cast<size_t>((e / layout.repeat) % layout.count);
      out[e] = store<T>(load(in[e]) * mul[s] + add[s]);
    }
  });
  // Running mean/var (training, opset 14+); before opset 14 the optional mean, var, saved_mean,
  // saved_var outputs carry the statistics used.
  for (size_t i = 1; i < ctx.output_count(); ++i) write_doubles(i % 2 == 1 ? mean : var, ctx.output(i));
  return Status::ok();
}

// ---- InstanceNormalization ----

Status instance_norm_rule(InferenceContext& ctx) {
  KILN_RETURN_IF_ERROR(float_inputs_rule(ctx, 3, 3));
  const ir::TensorType& x = ctx.input_type(0);
  if (x.shape && x.shape->rank() < 3) return ctx.error("input must have rank >= 3, got " + x.shape->to_string());
  return Status::ok();
}

Status instance_norm_kernel(KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  const int64_t channels = x.shape()[1];
  const int64_t spatial = shape_element_count({x.shape().begin() + 2, x.shape().end()});
  const std::vector<double> scale = as_doubles(*ctx.input(1)), bias = as_doubles(*ctx.input(2));
  if (static_cast<int64_t>(scale.size()) != channels || static_cast<int64_t>(bias.size()) != channels)
    return ctx.error("scale and B need " + std::to_string(channels) + " elements");
  const double epsilon = ctx.node().attr_float("epsilon", 1e-5f);
  dispatch<FloatTypes>(x.dtype(), [&]<class T>() {  // GroupNormalization with a group per channel
    const T* in = x.data<T>();
    T* out = ctx.output(0)->data<T>();
    for (int64_t g = 0; g < x.shape()[0] * channels; ++g)
      normalize_group(in + g * spatial, out + g * spatial, g % channels, 1, spatial, scale.data(), bias.data(), true, epsilon);
  });
  return Status::ok();
}

// ---- GroupNormalization ----

Status group_norm_rule(InferenceContext& ctx) {
  KILN_RETURN_IF_ERROR(float_inputs_rule(ctx, 3, 3));
  const int64_t groups = ctx.node().attr_int("num_groups", 0);
  if (groups <= 0) return ctx.error("num_groups must be positive");
  const ir::TensorType& x = ctx.input_type(0);
  if (x.shape && x.shape->rank() < 2) return ctx.error("input must have rank >= 2, got " + x.shape->to_string());
  if (x.shape && (*x.shape)[1].is_static()) {
    const int64_t channels = (*x.shape)[1].value();
    if (channels % groups != 0)
      return ctx.error(std::to_string(channels) + " channels do not split into " + std::to_string(groups) + " groups");
    const int64_t params = ctx.opset() >= 21 ? channels : groups;
    for (size_t i : {size_t{1}, size_t{2}}) {
      const auto& s = ctx.input_type(i).shape;
      if (s && s->is_static() && (s->rank() != 1 || s->static_dims()[0] != params))
        return ctx.error(std::string(i == 1 ? "scale" : "bias") + " must have shape [" + std::to_string(params) + "] at opset " +
                         std::to_string(ctx.opset()) + ", got " + s->to_string());
    }
  }
  return Status::ok();
}

Status group_norm_kernel(KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  const int64_t batch = x.shape()[0], channels = x.shape()[1], groups = ctx.node().attr_int("num_groups", 0);
  const int64_t spatial = shape_element_count({x.shape().begin() + 2, x.shape().end()});
  const bool per_channel = ctx.opset() >= 21;
  const std::vector<double> scale = as_doubles(*ctx.input(1)), bias = as_doubles(*ctx.input(2));
  const auto params = static_cast<size_t>(per_channel ? channels : groups);
  if (groups <= 0 || channels % groups != 0 || scale.size() != params || bias.size() != params)
    return ctx.error("scale and bias need " + std::to_string(params) + " values and C a multiple of num_groups");
  const double epsilon = ctx.node().attr_float("epsilon", 1e-5f);
  const int64_t per_group = channels / groups, group_size = per_group * spatial;
  dispatch<FloatTypes>(x.dtype(), [&]<class T>() {
    const T* in = x.data<T>();
    T* out = ctx.output(0)->data<T>();
    for (int64_t ng = 0; ng < batch * groups; ++ng)
      normalize_group(in + ng * group_size, out + ng * group_size, ng % groups, per_group, spatial, scale.data(), bias.data(),
                      per_channel, epsilon);
  });
  return Status::ok();
}

// ---- LpNormalization ----

Status lp_norm_rule(InferenceContext& ctx) {
  KILN_RETURN_IF_ERROR(float_inputs_rule(ctx, 1, 1));
  const int64_t p = ctx.node().attr_int("p", 2);
  if (p != 1 && p != 2) return ctx.error("p must be 1 or 2, got " + std::to_string(p));
  const ir::TensorType& x = ctx.input_type(0);
  if (x.shape) {
    auto axis = normalize_axis(ctx.node().attr_int("axis", -1), static_cast<int64_t>(x.shape->rank()));
    if (!axis.is_ok()) return ctx.error(axis.status().message());
  }
  return Status::ok();
}

Status lp_norm_kernel(KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  auto axis = normalize_axis(ctx.node().attr_int("axis", -1), x.rank());
  if (!axis.is_ok()) return ctx.error(axis.status().message());
  const bool l1 = ctx.node().attr_int("p", 2) == 1;
  const auto at = x.shape().begin() + axis.value();
  const int64_t n = *at, inner = shape_element_count({at + 1, x.shape().end()});
  const int64_t outer = shape_element_count({x.shape().begin(), at});
  dispatch<FloatTypes>(x.dtype(), [&]<class T>() {
    for (int64_t row = 0; row < outer * inner; ++row) {
      const int64_t base = (row / inner) * n * inner + row % inner;
      lp_normalize_line(x.data<T>() + base, ctx.output(0)->data<T>() + base, n, inner, l1);
    }
  });
  return Status::ok();
}

// ---- MeanVarianceNormalization ----

Status mvn_rule(InferenceContext& ctx) {
  KILN_RETURN_IF_ERROR(float_inputs_rule(ctx, 1, 1));
  const ir::TensorType& x = ctx.input_type(0);
  if (x.shape) {
    auto axes = mvn_axes(ctx.node(), static_cast<int64_t>(x.shape->rank()));
    if (!axes.is_ok()) return ctx.error(axes.status().message());
  }
  return Status::ok();
}

Status mvn_kernel(KernelContext& ctx) { return mean_variance_normalization(ctx, run_in_order); }

}  // namespace

Result<std::vector<bool>> mvn_axes(const ir::Node& node, int64_t rank) {
  std::vector<bool> reduced(static_cast<size_t>(rank), false);
  for (int64_t a : node.attr_ints("axes", {0, 2, 3})) {
    KILN_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(a, rank, "axis"));
    reduced[static_cast<size_t>(axis)] = true;
  }
  return reduced;
}

Status mean_variance_normalization(KernelContext& ctx, const TaskRunner& run) {
  const Tensor& x = *ctx.input(0);
  const std::vector<int64_t>& shape = x.shape();
  auto reduced = mvn_axes(ctx.node(), static_cast<int64_t>(shape.size()));
  if (!reduced.is_ok()) return ctx.error(reduced.status().message());
  // Each slice: the kept dims pick its start, the reduced dims (an odometer) walk its elements.
  std::vector<int64_t> kept_dims, kept_strides, reduced_dims, reduced_strides;
  for (size_t d = 0; d < shape.size(); ++d) {
    const bool is_reduced = reduced.value()[d];
    (is_reduced ? reduced_dims : kept_dims).push_back(shape[d]);
    (is_reduced ? reduced_strides : kept_strides).push_back(dims_product(shape, d + 1, shape.size()));
  }
  const int64_t count = shape_element_count(reduced_dims), slices = count == 0 ? 0 : shape_element_count(kept_dims);
  const bool ok = dispatch<FloatTypes>(x.dtype(), [&]<class T>() {
    const T* in = x.data<T>();
    T* out = ctx.output(0)->data<T>();
    run(slices, [&](int64_t slice) {
      int64_t start = 0;
      for (size_t k = kept_dims.size(), rest = static_cast<size_t>(slice); k-- > 0;) {
        start += static_cast<int64_t>(rest % static_cast<size_t>(kept_dims[k])) * kept_strides[k];
        rest /= static_cast<size_t>(kept_dims[k]);
      }
      const auto for_each_element = [&](auto&& visit) {
        std::vector<int64_t> index(reduced_dims.size(), 0);
        int64_t offset = start;
        for (int64_t i = 0; i < count; ++i) {
          visit(offset);
          for (size_t d = reduced_dims.size(); d-- > 0;) {
            offset += reduced_strides[d];
            if (++index[d] < reduced_dims[d]) break;
            offset -= index[d] * reduced_strides[d];
            index[d] = 0;
          }
        }
      };
      double sum = 0, squares = 0;
      for_each_element([&](int64_t o) {
        const double v = load(in[o]);
        sum += v;
        squares += v * v;
      });
      const double mean = sum / static_cast<double>(count);
      const double deviation = std::sqrt(std::max(squares / static_cast<double>(count) - mean * mean, 0.0)) + 1e-9;
      for_each_element([&](int64_t o) { out[o] = store<T>((load(in[o]) - mean) / deviation); });
    });
  });
  return ok ? Status::ok() : ctx.error(std::string("unsupported element type ") + dtype_name(x.dtype()));
}

void register_normalization_ops(OpRegistry& r) {
  r.add(OpDef{"", "LayerNormalization", 17, layer_norm_rule, layer_norm_kernel});
  for (int v : {1, 6, 7, 9, 14, 15}) r.add(OpDef{"", "BatchNormalization", v, batch_norm_rule, batch_norm_kernel});
  for (int v : {1, 6}) r.add(OpDef{"", "InstanceNormalization", v, instance_norm_rule, instance_norm_kernel});
  for (int v : {18, 21}) r.add(OpDef{"", "GroupNormalization", v, group_norm_rule, group_norm_kernel});
  r.add(OpDef{"", "LpNormalization", 1, lp_norm_rule, lp_norm_kernel});
  for (int v : {9, 13}) r.add(OpDef{"", "MeanVarianceNormalization", v, mvn_rule, mvn_kernel});
}

}  // namespace kiln::ops
