// Op family random: RandomUniform, RandomNormal, their *Like forms, Bernoulli and Multinomial.
// With a `seed` attribute a node draws the same values on every run; without one, each run takes
// the next stream of a process-wide sequence (so a process's runs are reproducible, but differ).
#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <numbers>
#include <random>

#include "kiln/ops/family_support.h"
#include "kiln/ops/op_families.h"
#include "kiln/ops/op_helpers.h"
#include "kiln/ops/op_registry.h"

namespace kiln::ops {
namespace {

using RandomFloatTypes = TypeList<float, double, Float16>;
using IndexTypes = TypeList<int32_t, int64_t>;

// ---- the generator ----

uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Uniform and normal draws from a 64-bit Mersenne Twister, computed here (not by std::
// distributions) so values are the same with every standard library.
class Sampler {
 public:
  explicit Sampler(const ir::Node& node) : engine_(seed_for(node)) {}

  // Uniform in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }
  // Standard normal by the Box-Muller transform.
  double normal() {
    const double u1 = 1.0 - uniform();  // (0, 1]: log is finite
    const double u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
  }

 private:
  static uint64_t seed_for(const ir::Node& node) {
    if (node.has_attr("seed")) return splitmix64(std::bit_cast<uint32_t>(node.attr_float("seed", 0.0f)));
    static std::atomic<uint64_t> next_stream{0};
    return splitmix64(0x6B696C6E00000000ull + next_stream.fetch_add(1));
  }

  std::mt19937_64 engine_;
};

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
  Sampler sampler(ctx.node());
  const double low = ctx.node().attr_float("low", 0.0f), high = ctx.node().attr_float("high", 1.0f);
  fill(*ctx.output(0), [&](int64_t) { return low + (high - low) * sampler.uniform(); });
  return Status::ok();
}

Status random_normal_kernel(KernelContext& ctx) {
  Sampler sampler(ctx.node());
  const double mean = ctx.node().attr_float("mean", 0.0f), scale = ctx.node().attr_float("scale", 1.0f);
  fill(*ctx.output(0), [&](int64_t) { return mean + scale * sampler.normal(); });
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
  Sampler sampler(ctx.node());
  const Tensor& p = *ctx.input(0);
  fill(*ctx.output(0), [&](int64_t i) { return sampler.uniform() < element_as_double(p, i) ? 1.0 : 0.0; });
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
  Sampler sampler(ctx.node());
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
      const double u = sampler.uniform() * total;
      const auto it = std::upper_bound(cumulative.begin(), cumulative.end(), u);
      drawn[static_cast<size_t>(b * samples + s)] = std::min<int64_t>(it - cumulative.begin(), classes - 1);
    }
  }
  fill(out, [&](int64_t i) { return static_cast<double>(drawn[static_cast<size_t>(i)]); });
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
}

}  // namespace kiln::ops
