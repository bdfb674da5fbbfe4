// Op family random: RandomUniform, RandomNormal, their *Like forms, Bernoulli, Multinomial and
// Dropout (the identity at inference, a random mask in training mode). Draws come from
// RandomStream: a node with a `seed` attribute draws the same values on every run.
#include <algorithm>
#include <cmath>

#include "kiln/ops/data_movement.h"
#include "kiln/ops/family_support.h"
#include "kiln/ops/op_families.h"
#include "kiln/ops/op_helpers.h"
#include "kiln/ops/op_registry.h"
#include "kiln/ops/random_stream.h"

namespace kiln::ops {
namespace {

using RandomFloatTypes = TypeList<float, double, Float16>;
using IndexTypes = TypeList<int32_t, int64_t>;

// Writes draw() into every element of a numeric or bool tensor.
template <class Draw>
void fill(Tensor& out, Draw&& draw) {
  dispatch<NumericOrBoolTypes>(out.dtype(), [&]<class T>() {
    T* y = out.data<T>();
    for (int64_t i = 0; i < out.element_count(); ++i) {
      const double v = draw(i);
      if constexpr (std::is_same_v<T, bool>) y[i] = v != 0.0;
      else if constexpr (std::is_integral_v<T>) y[i] = saturating_cast<T>(v);
      else y[i] = store<T>(v);
    }
  });
}

// The `dtype` attribute when given (else `fallback`), which must be in List (an unknown fallback passes).
template <class List>
Result<DType> dtype_attr(const InferenceContext& ctx, DType fallback) {
  if (!ctx.node().has_attr("dtype") && fallback == DType::kUndefined) return fallback;
  const int64_t code = ctx.node().attr_int("dtype", static_cast<int64_t>(fallback));
  if (code < 0 || code > 16 || !list_has(List{}, static_cast<DType>(code)))
    return ctx.error("dtype " + std::to_string(code) + " is not allowed for this op");
  return static_cast<DType>(code);
}

// ---- RandomUniform, RandomNormal and the *Like forms ----

// The output type: from the shape and dtype attributes, or (for *Like) from the input.
Status random_infer(InferenceContext& ctx, bool like) {
  KILN_RETURN_IF_ERROR(check_input_count(ctx, like ? 1 : 0, like ? 1 : 0));
  if (like) {
    const ir::TensorType& in = ctx.input_type(0);
    KILN_ASSIGN_OR_RETURN(DType dtype, dtype_attr<RandomFloatTypes>(ctx, in.dtype));
    ctx.set_output_type(0, ir::TensorType{dtype, in.shape});
    return Status::ok();
  }
  if (!ctx.node().has_attr("shape")) return ctx.error("needs a shape attribute");
  const std::vector<int64_t> shape = ctx.node().attr_ints("shape");
  for (int64_t d : shape)
    if (d < 0) return ctx.error("shape must not hold negative dims, got " + shape_to_string(shape));
  KILN_ASSIGN_OR_RETURN(DType dtype, dtype_attr<RandomFloatTypes>(ctx, DType::kFloat));
  ctx.set_output_type(0, ir::make_type(dtype, shape));
  return Status::ok();
}

Status random_uniform_kernel(KernelContext& ctx) {
  RandomStream stream(ctx.node());
  const double low = ctx.node().attr_float("low", 0.0f), high = ctx.node().attr_float("high", 1.0f);
  fill(*ctx.output(0), [&](int64_t) { return low + (high - low) * stream.uniform(); });
  return Status::ok();
}

Status random_normal_kernel(KernelContext& ctx) {
  RandomStream stream(ctx.node());
  const double mean = ctx.node().attr_float("mean", 0.0f), scale = ctx.node().attr_float("scale", 1.0f);
  fill(*ctx.output(0), [&](int64_t) { return mean + scale * stream.normal(); });
  return Status::ok();
}

// ---- Bernoulli ----

Status bernoulli_infer(InferenceContext& ctx) {
  KILN_RETURN_IF_ERROR(check_input_count(ctx, 1, 1));
  KILN_RETURN_IF_ERROR(check_input_dtype<RandomFloatTypes>(ctx, 0));
  const ir::TensorType& in = ctx.input_type(0);
  KILN_ASSIGN_OR_RETURN(DType dtype, dtype_attr<NumericOrBoolTypes>(ctx, in.dtype));
  ctx.set_output_type(0, ir::TensorType{dtype, in.shape});
  return Status::ok();
}

// 1 with probability p (an input element), else 0.
Status bernoulli_kernel(KernelContext& ctx) {
  RandomStream stream(ctx.node());
  const Tensor& p = *ctx.input(0);
  fill(*ctx.output(0), [&](int64_t i) { return stream.uniform() < element_as_double(p, i) ? 1.0 : 0.0; });
  return Status::ok();
}

// ---- Multinomial ----

Status multinomial_infer(InferenceContext& ctx) {
  KILN_RETURN_IF_ERROR(check_input_count(ctx, 1, 1));
  KILN_RETURN_IF_ERROR(check_input_dtype<RandomFloatTypes>(ctx, 0));
  KILN_ASSIGN_OR_RETURN(DType dtype, dtype_attr<IndexTypes>(ctx, DType::kInt32));
  const int64_t samples = ctx.node().attr_int("sample_size", 1);
  if (samples < 1) return ctx.error("sample_size must be positive, got " + std::to_string(samples));
  const ir::TensorType& in = ctx.input_type(0);
  if (in.shape && in.shape->rank() != 2) return ctx.error("input must have shape [batch_size, class_size]");
  const ir::Dim batch = in.shape ? (*in.shape)[0] : ir::Dim();
  ctx.set_output_type(0, ir::TensorType{dtype, ir::Shape({batch, ir::Dim(samples)})});
  return Status::ok();
}

// Each row holds unnormalised log-probabilities; a sample is the first class whose cumulative
// probability exceeds a uniform draw.
Status multinomial_kernel(KernelContext& ctx) {
  RandomStream stream(ctx.node());
  const Tensor& logits = *ctx.input(0);
  Tensor& out = *ctx.output(0);
  const int64_t classes = logits.shape()[1], samples = out.shape()[1];
  if (classes < 1) return ctx.error("class_size must be positive");
  std::vector<double> cumulative(static_cast<size_t>(classes));
  std::vector<int64_t> drawn(static_cast<size_t>(out.element_count()));
  for (int64_t b = 0; b < out.shape()[0]; ++b) {
    double top = -INFINITY;
    for (int64_t c = 0; c < classes; ++c) top = std::max(top, element_as_double(logits, b * classes + c));
    double total = 0.0;
    for (int64_t c = 0; c < classes; ++c) {
      total += std::exp(element_as_double(logits, b * classes + c) - top);
      cumulative[static_cast<size_t>(c)] = total;
    }
    for (int64_t s = 0; s < samples; ++s) {
      const double u = stream.uniform() * total;
      const auto it = std::upper_bound(cumulative.begin(), cumulative.end(), u);
      drawn[static_cast<size_t>(b * samples + s)] = std::min<int64_t>(it - cumulative.begin(), classes - 1);
    }
  }
  fill(out, [&](int64_t i) { return static_cast<double>(drawn[static_cast<size_t>(i)]); });
  return Status::ok();
}

// ---- Dropout ----

// The mask is bool since opset 10 and the data's type before.
Status dropout_infer(InferenceContext& ctx) {
  const ir::TensorType& in = ctx.input_type(0);
  ctx.set_output_type(0, in);
  if (ctx.output_count() > 1) ctx.set_output_type(1, ir::TensorType{ctx.opset() >= 10 ? DType::kBool : in.dtype, in.shape});
  return Status::ok();
}

// The drop probability: the `ratio` input (opset 12+), else the attribute (default 0.5).
Result<double> dropout_ratio(const KernelContext& ctx) {
  double ratio = ctx.node().attr_float("ratio", 0.5f);
  if (const Tensor* r = ctx.input(1)) {
    if (r->element_count() != 1) return ctx.error("ratio must be a scalar, got shape " + shape_to_string(r->shape()));
    ratio = element_as_double(*r, 0);
  }
  if (!(ratio >= 0.0 && ratio < 1.0)) return ctx.error("ratio must be in [0, 1), got " + std::to_string(ratio));
  return ratio;
}

// Training mode is the `training_mode` input of opset 12+ (default false).
Result<bool> dropout_training(const KernelContext& ctx) {
  const Tensor* t = ctx.opset() >= 12 ? ctx.input(2) : nullptr;
  if (!t) return false;
  if (t->element_count() != 1 || t->dtype() != DType::kBool) return ctx.error("training_mode must be a bool scalar");
  return t->data<bool>()[0];
}

// At inference Dropout is the identity with an all-true mask. In training mode each element is
// kept when a uniform draw is >= ratio and scaled by 1 / (1 - ratio), else zeroed.
Status dropout_kernel(KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(const bool training, dropout_training(ctx));
  KILN_ASSIGN_OR_RETURN(const double ratio, dropout_ratio(ctx));
  const Tensor& x = *ctx.input(0);
  std::vector<uint8_t> keep(static_cast<size_t>(x.element_count()), 1);
  if (training && ratio > 0.0) {
    RandomStream stream(ctx.node());
    for (uint8_t& k : keep) k = stream.uniform() >= ratio;
  }
  const double scale = training ? 1.0 / (1.0 - ratio) : 1.0;
  const bool typed = dispatch<FloatTypes>(x.dtype(), [&]<class T>() {
    const T* in = x.data<T>();
    T* out = ctx.output(0)->data<T>();
    const double typed_scale = static_cast<double>(load(store<T>(scale)));
    for (size_t i = 0; i < keep.size(); ++i)
      out[i] = keep[i] ? store<T>(static_cast<double>(load(in[i])) * typed_scale) : store<T>(0.0);
  });
  if (!typed) return ctx.error("data must be a floating-point tensor, got " + std::string(dtype_name(x.dtype())));
  if (Tensor* mask = ctx.output(1))
    fill(*mask, [&](int64_t i) { return static_cast<double>(keep[static_cast<size_t>(i)]); });
  return Status::ok();
}

}  // namespace

void register_random_ops(OpRegistry& r) {
  const auto plain = [](InferenceContext& ctx) { return random_infer(ctx, false); };
  const auto like = [](InferenceContext& ctx) { return random_infer(ctx, true); };
  r.add({"", "RandomUniform", 1, plain, random_uniform_kernel});
  r.add({"", "RandomNormal", 1, plain, random_normal_kernel});
  r.add({"", "RandomUniformLike", 1, like, random_uniform_kernel});
  r.add({"", "RandomNormalLike", 1, like, random_normal_kernel});
  r.add({"", "Bernoulli", 15, bernoulli_infer, bernoulli_kernel});
  r.add({"", "Multinomial", 7, multinomial_infer, multinomial_kernel});
  for (int v : {1, 6, 7, 10, 12, 13}) r.add({"", "Dropout", v, with_required_inputs(1, dropout_infer), dropout_kernel});
}

}  // namespace kiln::ops
