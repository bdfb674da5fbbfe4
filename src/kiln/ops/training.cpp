// The ai.onnx.preview.training domain. Optimizer steps Adagrad, Momentum and Adam each update n
// tensors at once: inputs are R, T, then n X's, n G's and the n-tensor states; outputs are the n
// new X's followed by the new states. Computed in double, stored in each tensor's type. Gradient
// only has a shape rule here: autodiff/gradient_expansion replaces it by ordinary ops at load.
#include <cmath>

#include "kiln/ops/op_families.h"
#include "kiln/ops/op_helpers.h"
#include "kiln/ops/op_registry.h"

namespace kiln::ops {

namespace {

constexpr const char* kDomain = "ai.onnx.preview.training";

// The number of optimized tensors: (inputs - 2) / groups, checked against the outputs.
Result<size_t> tensor_count(const ir::Node& node, size_t input_groups, size_t output_groups, size_t inputs,
                            size_t outputs) {
  if (inputs < 2 + input_groups || (inputs - 2) % input_groups != 0 || outputs != (inputs - 2) / input_groups * output_groups)
    return invalid_model(node.describe() + ": expects R, T and " + std::to_string(input_groups) + " groups of tensors (" +
                         std::to_string(output_groups) + " groups of outputs)");
  return (inputs - 2) / input_groups;
}

// Output j*n + i has the type of input 2 + j*n + i (X_new like X, states like their inputs).
ShapeRule optimizer_infer(size_t input_groups, size_t output_groups) {
  return [=](InferenceContext& ctx) -> Status {
    KILN_ASSIGN_OR_RETURN(size_t n, tensor_count(ctx.node(), input_groups, output_groups, ctx.input_count(), ctx.output_count()));
    for (size_t j = 0; j < output_groups; ++j) {
      const size_t source = j == 0 ? 0 : input_groups - output_groups + j;  // X, then the state groups
      for (size_t i = 0; i < n; ++i) ctx.set_output_type(j * n + i, ctx.input_type(2 + source * n + i));
    }
    return Status::ok();
  };
}

double scalar(const Tensor& t) { return element_as_double(t, 0); }

// One element's update: reads the inputs' element k of tensor i, writes the outputs' element k.
using ElementStep = std::function<void(const std::vector<double>& in, std::vector<double>& out)>;

// Applies `step` to every element of every optimized tensor (the states have X's shape).
Status apply(KernelContext& ctx, size_t input_groups, size_t output_groups, const ElementStep& step) {
  KILN_ASSIGN_OR_RETURN(size_t n, tensor_count(ctx.node(), input_groups, output_groups, ctx.input_count(), ctx.output_count()));
  for (size_t i = 0; i < n; ++i) {
    const Tensor& x = *ctx.input(2 + i);
    std::vector<double> in(input_groups), out(output_groups);
    for (int64_t k = 0; k < x.element_count(); ++k) {
      for (size_t g = 0; g < input_groups; ++g) in[g] = element_as_double(*ctx.input(2 + g * n + i), k);
      step(in, out);
      for (size_t g = 0; g < output_groups; ++g)
        if (Tensor* o = ctx.output(g * n + i)) store_double(*o, k, out[g]);
    }
  }
  return Status::ok();
}

Status adagrad_kernel(KernelContext& ctx) {
  const ir::Node& node = ctx.node();
  const double decay = node.attr_float("decay_factor", 0), eps = node.attr_float("epsilon", 1e-6f),
               norm = node.attr_float("norm_coefficient", 0);
  const double r = scalar(*ctx.input(0)) / (1 + scalar(*ctx.input(1)) * decay);
  return apply(ctx, 3, 2, [&](const std::vector<double>& in, std::vector<double>& out) {
    const double g = norm * in[0] + in[1];
    const double h = in[2] + g * g;
    out[0] = in[0] - r * g / (std::sqrt(h) + eps);
    out[1] = h;
  });
}

Status momentum_kernel(KernelContext& ctx) {
  const ir::Node& node = ctx.node();
  const double alpha = node.attr_float("alpha", 0), beta = node.attr_float("beta", 0),
               norm = node.attr_float("norm_coefficient", 0);
  const std::string mode = node.attr_string("mode", "standard");
  if (mode != "standard" && mode != "nesterov") return ctx.error("mode must be standard or nesterov, not '" + mode + "'");
  const double r = scalar(*ctx.input(0));
  const double beta_adjusted = scalar(*ctx.input(1)) > 0 ? beta : 1;
  return apply(ctx, 3, 2, [&](const std::vector<double>& in, std::vector<double>& out) {
    const double g = norm * in[0] + in[1];
    const double v = alpha * in[2] + beta_adjusted * g;
    out[0] = mode == "nesterov" ? in[0] - r * (g + alpha * v) : in[0] - r * v;
    out[1] = v;
  });
}

Status adam_kernel(KernelContext& ctx) {
  const ir::Node& node = ctx.node();
  const double alpha = node.attr_float("alpha", 0.9f), beta = node.attr_float("beta", 0.999f),
               eps = node.attr_float("epsilon", 1e-6f), norm = node.attr_float("norm_coefficient", 0),
               post = node.attr_float("norm_coefficient_post", 0);
  const double r = scalar(*ctx.input(0)), t = scalar(*ctx.input(1));
  const double r_adjusted = t > 0 ? r * std::sqrt(1 - std::pow(beta, t)) / (1 - std::pow(alpha, t)) : r;
  return apply(ctx, 4, 3, [&](const std::vector<double>& in, std::vector<double>& out) {
    const double g = norm * in[0] + in[1];
    const double v = alpha * in[2] + (1 - alpha) * g;
    const double h = beta * in[3] + (1 - beta) * g * g;
    out[0] = (1 - post) * (in[0] - r_adjusted * v / (std::sqrt(h) + eps));
    out[1] = v;
    out[2] = h;
  });
}

// dx/dy has x's type; x is input i (inputs are xs then zs).
Status gradient_infer(InferenceContext& ctx) {
  if (ctx.output_count() > ctx.input_count())
    return ctx.error("has more outputs than inputs; inputs must be the values of 'xs' followed by 'zs'");
  for (size_t i = 0; i < ctx.output_count(); ++i) ctx.set_output_type(i, ctx.input_type(i));
  return Status::ok();
}

Status gradient_kernel(KernelContext& ctx) {
  return internal_error(ctx.node().describe() + " reached execution; Session expands Gradient nodes at load");
}

}  // namespace

void register_training_ops(OpRegistry& r) {
  r.add({kDomain, "Adagrad", 1, optimizer_infer(3, 2), adagrad_kernel});
  r.add({kDomain, "Momentum", 1, optimizer_infer(3, 2), momentum_kernel});
  r.add({kDomain, "Adam", 1, optimizer_infer(4, 3), adam_kernel});
  r.add({kDomain, "Gradient", 1, gradient_infer, gradient_kernel});
}

}  // namespace kiln::ops
