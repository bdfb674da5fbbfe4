// Losses: NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (opsets 12 and 13), with class
// weights, ignore_index and reductions none/sum/mean. Computed in double, stored in the input's type.
#include <cmath>

#include "kiln/ops/op_families.h"
#include "kiln/ops/op_helpers.h"
#include "kiln/ops/op_registry.h"

namespace kiln::ops {

namespace {

std::string reduction(const ir::Node& node) { return node.attr_string("reduction", "mean"); }

// Shared rule: input [N, C, d...] (scores or log-probabilities), target [N, d...], weight [C].
Status loss_infer(InferenceContext& ctx) {
  if (!ctx.has_input(0) || !ctx.has_input(1)) return ctx.error("needs an input and a target");
  const ir::TensorType& in = ctx.input_type(0);
  const ir::TensorType& target = ctx.input_type(1);
  if (!is_float_dtype(in.dtype)) return ctx.error(std::string("input must be floating point, not ") + dtype_name(in.dtype));
  if (target.dtype != DType::kInt32 && target.dtype != DType::kInt64) return ctx.error("target must be int32 or int64");
  const std::string r = reduction(ctx.node());
  if (r != "none" && r != "sum" && r != "mean") return ctx.error("reduction must be none, sum or mean, not '" + r + "'");
  if (in.shape && in.shape->rank() < 2) return ctx.error("input must have rank >= 2 ([N, C, ...])");
  if (in.shape && target.shape && target.shape->rank() + 1 != in.shape->rank())
    return ctx.error("target rank must be input rank - 1");
  if (r == "none") ctx.set_output_type(0, ir::TensorType{in.dtype, target.shape});
  else ctx.set_output_type(0, ir::make_type(in.dtype, {}));
  if (ctx.output_count() > 1) ctx.set_output_type(1, in);  // SoftmaxCrossEntropyLoss's log_prob
  return Status::ok();
}

void store_doubles(Tensor& out, const std::vector<double>& v) {
  for (size_t i = 0; i < v.size(); ++i) store_double(out, static_cast<int64_t>(i), v[i]);
}

// NLL over log-probabilities `logp` of shape [N, C, d...] into `out` (reduced as the node says).
Status nll(const KernelContext& ctx, const std::vector<int64_t>& shape, const std::vector<double>& logp,
           const Tensor& target, const Tensor* weight, Tensor& out) {
  const int64_t n = shape[0], classes = shape[1];
  const int64_t inner = shape_element_count(std::vector<int64_t>(shape.begin() + 2, shape.end()));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> labels, read_int64s(target, "target"));
  std::vector<double> weights = weight ? as_doubles(*weight) : std::vector<double>();
  if (weight && static_cast<int64_t>(weights.size()) != classes) return ctx.error("weight must have C elements");
  const bool has_ignore = ctx.node().has_attr("ignore_index");
  const int64_t ignore = ctx.node().attr_int("ignore_index", 0);
  std::vector<double> losses(static_cast<size_t>(n * inner));
  double weight_sum = 0;
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t d = 0; d < inner; ++d) {
      const int64_t label = labels[static_cast<size_t>(b * inner + d)];
      if (has_ignore && label == ignore) continue;
      if (label < 0 || label >= classes)
        return ctx.error("target " + std::to_string(label) + " is outside [0, " + std::to_string(classes) + ")");
      const double w = weight ? weights[static_cast<size_t>(label)] : 1.0;
      losses[static_cast<size_t>(b * inner + d)] = -logp[static_cast<size_t>((b * classes + label) * inner + d)] * w;
      weight_sum += w;
    }
  }
  const std::string r = reduction(ctx.node());
  if (r == "none") {
    store_doubles(out, losses);
    return Status::ok();
  }
  double total = 0;
  for (double l : losses) total += l;
  store_doubles(out, {r == "sum" ? total : total / weight_sum});
  return Status::ok();
}

Status nll_kernel(KernelContext& ctx) {
  const Tensor& in = *ctx.input(0);
  return nll(ctx, in.shape(), as_doubles(in), *ctx.input(1), ctx.input(2), *ctx.output(0));
}

// log_softmax over axis 1 of [N, C, d...].
std::vector<double> log_softmax_axis1(const std::vector<int64_t>& shape, const std::vector<double>& x) {
  const int64_t n = shape[0], classes = shape[1];
  const int64_t inner = shape_element_count(std::vector<int64_t>(shape.begin() + 2, shape.end()));
  std::vector<double> out(x.size());
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t d = 0; d < inner; ++d) {
      auto at = [&](int64_t c) { return static_cast<size_t>((b * classes + c) * inner + d); };
      double max = -INFINITY;
      for (int64_t c = 0; c < classes; ++c) max = std::max(max, x[at(c)]);
      double sum = 0;
      for (int64_t c = 0; c < classes; ++c) sum += std::exp(x[at(c)] - max);
      const double log_sum = max + std::log(sum);
      for (int64_t c = 0; c < classes; ++c) out[at(c)] = x[at(c)] - log_sum;
    }
  }
  return out;
}

Status sce_kernel(KernelContext& ctx) {
  const Tensor& scores = *ctx.input(0);
  const std::vector<double> logp = log_softmax_axis1(scores.shape(), as_doubles(scores));
  if (Tensor* log_prob = ctx.output(1)) store_doubles(*log_prob, logp);
  return nll(ctx, scores.shape(), logp, *ctx.input(1), ctx.input(2), *ctx.output(0));
}

}  // namespace

void register_loss_ops(OpRegistry& r) {
  for (int v : {12, 13}) {
    r.add({"", "NegativeLogLikelihoodLoss", v, loss_infer, nll_kernel});
    r.add({"", "SoftmaxCrossEntropyLoss", v, loss_infer, sce_kernel});
  }
}

}  // namespace kiln::ops
