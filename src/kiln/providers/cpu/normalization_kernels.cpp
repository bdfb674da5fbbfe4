// cpu kernels for Softmax, LogSoftmax, LayerNormalization and inference-mode BatchNormalization as
// oneDNN primitives. Softmax before opset 13 normalises the flattened [outer, inner] view from
// `axis`; LayerNormalization normalises the trailing dims from `axis` as one, with its scale and
// bias per element of those dims (expanded when they broadcast); BatchNormalization uses the given
// mean and variance per channel (what batchnorm_folding leaves: one not after a Conv), in any
// activation layout when a kiln.InLayout wraps it (DenseNet's, inside a convolution region).
// GroupNormalization and InstanceNormalization (which oneDNN 2.6 lacks) run the reference's
// per-group function on threads, LpNormalization and LRN its per-line and per-plane functions,
// MeanVarianceNormalization its per-slice function.
#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <numeric>

#include "kiln/ops/activation.h"
#include "kiln/ops/activation_layout.h"
#include "kiln/ops/group_normalization.h"
#include "kiln/ops/local_normalizations.h"
#include "kiln/ops/mean_variance_normalization.h"
#include "kiln/ops/op_helpers.h"
#include "kiln/providers/cpu/broadcast_copy.h"
#include "kiln/providers/cpu/cpu_kernels.h"
#include "kiln/providers/cpu/onednn_support.h"

namespace kiln::providers::cpu {
namespace {

using dnnl::memory;

int64_t product(const std::vector<int64_t>& dims, size_t begin, size_t end) {
  return std::accumulate(dims.begin() + static_cast<std::ptrdiff_t>(begin), dims.begin() + static_cast<std::ptrdiff_t>(end),
                         int64_t{1}, std::multiplies<>());
}

// The normalised axis (default -1, or 1 for Softmax before opset 13), in [0, rank).
Result<size_t> axis_of(const ir::Node& node, size_t rank) {
  const int64_t fallback = node.op_type != "LayerNormalization" && node.opset_version < 13 ? 1 : -1;
  KILN_ASSIGN_OR_RETURN(const int64_t axis, ops::normalize_axis(node.attr_int("axis", fallback), static_cast<int64_t>(rank)));
  return static_cast<size_t>(axis);
}

Capability softmax_supports(const ir::Node& node) {
  Capability c = float_tensors(node, {0});
  if (!c.supported) return c;
  if (node.inputs[0]->type.shape->rank() == 0) return Capability::no("Softmax of a scalar");
  return Capability::yes();
}

// Softmax along a middle axis ([outer, count, inner], inner > 1): oneDNN runs that only in its
// reference implementation, so the rows are gathered innermost ([outer, inner, count]) into the
// run scratch by a reorder, normalised there, and put back by another.
Result<ops::Kernel> softmax_across_rows(const KernelSite& site, const std::vector<int64_t>& view, dnnl::algorithm alg) {
  const int64_t outer = view[0], count = view[1], inner = view[2];
  struct State {
    memory::desc given, rows;
    dnnl::reorder gather, scatter;
    dnnl::softmax_v2_forward softmax;
    dnnl::stream stream{cpu_engine()};
    PrimitiveArgs gather_args, softmax_args, scatter_args;  // of the last run
  };
  auto s = std::make_shared<State>();
  s->given = strided_desc({outer, inner, count}, {count * inner, 1, inner});  // the tensor, rows along the last dim
  s->rows = row_major_desc({outer, inner, count});
  s->gather = checked(site, dnnl::reorder(dnnl::reorder::primitive_desc(cpu_engine(), s->given, cpu_engine(), s->rows)));
  s->scatter = checked(site, dnnl::reorder(dnnl::reorder::primitive_desc(cpu_engine(), s->rows, cpu_engine(), s->given)));
  const dnnl::softmax_v2_forward::desc desc(dnnl::prop_kind::forward_inference, alg, s->rows, s->rows, 2);
  s->softmax = checked(site, dnnl::softmax_v2_forward(dnnl::softmax_v2_forward::primitive_desc(desc, cpu_engine())));
  const size_t elements = static_cast<size_t>(outer * inner * count);
  return ops::Kernel([s, elements](ops::KernelContext& ctx) {
    return guard(ctx.node(), [&] {
      const float* rows = run_scratch_floats(elements);
      s->gather_args.set(DNNL_ARG_FROM, s->given, *ctx.input(0));
      s->gather_args.set(DNNL_ARG_TO, s->rows, rows);
      s->gather.execute(s->stream, s->gather_args.map());
      s->softmax_args.set(DNNL_ARG_SRC, s->rows, rows);
      s->softmax_args.set(DNNL_ARG_DST, s->rows, rows);
      s->softmax.execute(s->stream, s->softmax_args.map());
      s->scatter_args.set(DNNL_ARG_FROM, s->rows, rows);
      s->scatter_args.set(DNNL_ARG_TO, s->given, *ctx.output(0));
      s->scatter.execute(s->stream, s->scatter_args.map());
      s->stream.wait();
      return Status::ok();
    });
  });
}

// Rows at most this long normalise by softmax_short_rows.
constexpr int64_t kShortRow = 16;

// Softmax of short rows ([rows, count], count <= kShortRow: a detector's per-anchor class scores).
// oneDNN's softmax vectorises along each row and pays a fixed cost per row (fp_detect's [4420, 2]
// scores: 103 us); here one pass shifts each row by its maximum, one oneDNN eltwise primitive
// exponentiates the whole tensor with vector code, and a last pass divides each row by its sum.
// LogSoftmax: x - max - log(sum), the exponentials in the run scratch, the logs of the sums by a
// second eltwise primitive.
Result<ops::Kernel> softmax_short_rows(const KernelSite& site, int64_t rows, int64_t count, bool log) {
  struct State {
    dnnl::eltwise_forward exp, log_sums;
    memory::desc values, sums;
    dnnl::stream stream{cpu_engine()};
    PrimitiveArgs exp_args, log_args;  // of the last run
  };
  auto s = std::make_shared<State>();
  s->values = row_major_desc({rows * count});
  s->sums = row_major_desc({rows});
  const auto eltwise = [&site](dnnl::algorithm alg, const memory::desc& d) {
    const dnnl::eltwise_forward::desc desc(dnnl::prop_kind::forward_inference, alg, d, 0.f, 0.f);
    return checked(site, dnnl::eltwise_forward(dnnl::eltwise_forward::primitive_desc(desc, cpu_engine())));
  };
  s->exp = eltwise(dnnl::algorithm::eltwise_exp, s->values);
  if (log) s->log_sums = eltwise(dnnl::algorithm::eltwise_log, s->sums);
  return ops::Kernel([s, rows, count, log](ops::KernelContext& ctx) {
    return guard(ctx.node(), [&] {
      const float* x = ctx.input(0)->data<float>();
      float* y = ctx.output(0)->data<float>();
      const bool parallel = rows * count >= (1 << 15);
#pragma omp parallel for schedule(static) if (parallel)
      for (int64_t r = 0; r < rows; ++r) {
        const float* row = x + r * count;
        const float top = *std::max_element(row, row + count);
        for (int64_t j = 0; j < count; ++j) y[r * count + j] = row[j] - top;
      }
      float* exps = log ? run_scratch_floats(static_cast<size_t>(rows * count + rows)) : y;
      float* sums = log ? exps + rows * count : nullptr;
      s->exp_args.set(DNNL_ARG_SRC, s->values, *ctx.output(0));
      s->exp_args.set(DNNL_ARG_DST, s->values, exps);
      s->exp.execute(s->stream, s->exp_args.map());
      s->stream.wait();
#pragma omp parallel for schedule(static) if (parallel)
      for (int64_t r = 0; r < rows; ++r) {
        float sum = 0.f;
        for (int64_t j = 0; j < count; ++j) sum += exps[r * count + j];
        if (log) {
          sums[r] = sum;
        } else {
          const float inverse = 1.f / sum;
          for (int64_t j = 0; j < count; ++j) y[r * count + j] *= inverse;
        }
      }
      if (!log) return Status::ok();
      s->log_args.set(DNNL_ARG_SRC, s->sums, sums);
      s->log_args.set(DNNL_ARG_DST, s->sums, sums);
      s->log_sums.execute(s->stream, s->log_args.map());
      s->stream.wait();
#pragma omp parallel for schedule(static) if (parallel)
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t j = 0; j < count; ++j) y[r * count + j] -= sums[r];
      return Status::ok();
    });
  });
}

Result<ops::Kernel> build_softmax(const ir::Node& node, KernelBuild& build) {
  const std::vector<int64_t> x = input_dims(node, 0);
  KILN_ASSIGN_OR_RETURN(const size_t axis, axis_of(node, x.size()));
  // Opset 13+: softmax along one axis, [outer, axis, inner]; before: over the flattened tail.
  std::vector<int64_t> view{product(x, 0, axis), x[axis], product(x, axis + 1, x.size())};
  if (node.opset_version < 13) view = {product(x, 0, axis), product(x, axis, x.size()), 1};
  const dnnl::algorithm alg = node.op_type == "LogSoftmax" ? dnnl::algorithm::softmax_log : dnnl::algorithm::softmax_accurate;
  if (view[2] == 1 && view[1] <= kShortRow && view[0] > 1)
    return softmax_short_rows({node, build}, view[0], view[1], node.op_type == "LogSoftmax");
  if (view[2] == 1) {
    const memory::desc data = row_major_desc(view);
    const dnnl::softmax_v2_forward::desc desc(dnnl::prop_kind::forward_inference, alg, data, data, 1);
    return primitive_kernel({node, build}, dnnl::softmax_v2_forward(dnnl::softmax_v2_forward::primitive_desc(desc, cpu_engine())),
                            [data](ops::KernelContext& ctx, PrimitiveArgs& args) {
                              args.set(DNNL_ARG_SRC, data, *ctx.input(0));
                              args.set(DNNL_ARG_DST, data, *ctx.output(0));
                            });
  }
  return softmax_across_rows({node, build}, view, alg);
}

Capability layer_norm_supports(const ir::Node& node) {
  Capability c = float_tensors(node, {0, 1, 2});
  if (!c.supported) return c;
  for (size_t i = 1; i < node.outputs.size(); ++i)
    if (node.outputs[i] && node.outputs[i]->type.dtype != DType::kFloat)
      return Capability::no("LayerNormalization's Mean and InvStdDev outputs of other than float32");
  if (node.attr_int("stash_type", 1) != 1) return Capability::no("LayerNormalization with stash_type other than float");
  return Capability::yes();
}

// LayerNormalization whose scale and bias hold one value per element of the normalised dims.
Result<ops::Kernel> layer_norm_of_whole_rows(const ir::Node& node, KernelBuild& build) {
  const std::vector<int64_t> x = input_dims(node, 0);
  KILN_ASSIGN_OR_RETURN(const size_t axis, axis_of(node, x.size()));
  const int64_t inner = product(x, axis, x.size());
  const bool has_bias = node.input(2) != nullptr;
  const int64_t rows = product(x, 0, axis);
  const double epsilon = node.attr_float("epsilon", 1e-5f);
  // Small inputs: a plain loop (mean and variance in double) beats the primitive, whose execution
  // costs a few microseconds before the first element. The loop also gives the Mean and InvStdDev
  // outputs (one per row), which oneDNN's inference primitive does not.
  const bool statistics = (node.outputs.size() > 1 && node.outputs[1]) || (node.outputs.size() > 2 && node.outputs[2]);
  if (rows * inner <= 8192 || statistics)
    return ops::Kernel([rows, inner, epsilon, has_bias](ops::KernelContext& ctx) {
      const float* in = ctx.input(0)->data<float>();
      const float* scale = ctx.input(1)->data<float>();
      const float* bias = has_bias ? ctx.input(2)->data<float>() : nullptr;
      float* out = ctx.output(0)->data<float>();
      float* means = ctx.output(1) ? ctx.output(1)->data<float>() : nullptr;
      float* inverse_deviations = ctx.output(2) ? ctx.output(2)->data<float>() : nullptr;
#pragma omp parallel for schedule(static) if (rows * inner > 8192)
      for (int64_t r = 0; r < rows; ++r) {
        const float* row = in + r * inner;
        double sum = 0, squares = 0;
        for (int64_t i = 0; i < inner; ++i) sum += row[i];
        const double mean = sum / static_cast<double>(inner);
        for (int64_t i = 0; i < inner; ++i) squares += (row[i] - mean) * (row[i] - mean);
        const auto inv = static_cast<float>(1.0 / std::sqrt(squares / static_cast<double>(inner) + epsilon));
        const auto m = static_cast<float>(mean);
        for (int64_t i = 0; i < inner; ++i) out[r * inner + i] = (row[i] - m) * inv * scale[i] + (bias ? bias[i] : 0.0f);
        if (means) means[r] = m;
        if (inverse_deviations) inverse_deviations[r] = inv;
      }
      return Status::ok();
    });
  const memory::desc data = row_major_desc({rows, inner}), channel = row_major_desc({inner});
  auto flags = dnnl::normalization_flags::use_scale;
  if (has_bias) flags = flags | dnnl::normalization_flags::use_shift;
  const dnnl::layer_normalization_forward::desc desc(dnnl::prop_kind::forward_inference, data, static_cast<float>(epsilon), flags);
  return primitive_kernel(
      {node, build}, dnnl::layer_normalization_forward(dnnl::layer_normalization_forward::primitive_desc(desc, cpu_engine())),
      [data, channel, has_bias](ops::KernelContext& ctx, PrimitiveArgs& args) {
        args.set(DNNL_ARG_SRC, data, *ctx.input(0));
        args.set(DNNL_ARG_SCALE, channel, *ctx.input(1));
        args.set(DNNL_ARG_DST, data, *ctx.output(0));
        if (has_bias) args.set(DNNL_ARG_SHIFT, channel, *ctx.input(2));
      });
}

// `operand` (unidirectionally broadcastable to `row`) expanded to `row`.
Tensor whole_row(const Tensor& operand, const std::vector<int64_t>& row) {
  Tensor expanded = Tensor::allocate(DType::kFloat, row);
  broadcast_copy(operand, expanded);
  return expanded;
}

// ONNX lets LayerNormalization's scale and bias broadcast over the normalised dims (a scale of [1],
// or [1, 7] over [3, 7]); the kernels read one value per element of those dims. Such an operand is
// expanded to the whole row: once here when it is a constant (as exporters give them), else on
// each run.
Result<ops::Kernel> build_layer_norm(const ir::Node& node, KernelBuild& build) {
  const std::vector<int64_t> x = input_dims(node, 0);
  KILN_ASSIGN_OR_RETURN(const size_t axis, axis_of(node, x.size()));
  const std::vector<int64_t> row(x.begin() + static_cast<std::ptrdiff_t>(axis), x.end());
  std::map<size_t, std::shared_ptr<const Tensor>> expanded;  // by input: the constant's expansion, or nullptr
  for (size_t i : {size_t{1}, size_t{2}}) {
    if (!node.input(i)) continue;
    const std::vector<int64_t> given = input_dims(node, i);
    if (shape_element_count(given) == shape_element_count(row)) continue;
    const Result<std::vector<int64_t>> broadcast = ops::broadcast_static(row, given);
    if (!broadcast.is_ok() || broadcast.value() != row)
      return invalid_argument(node.describe() + ": input " + std::to_string(i) + " of shape " + shape_to_string(given) +
                              " does not broadcast to the normalised dims " + shape_to_string(row));
    const Tensor* constant = constant_input(node, i);
    expanded[i] = constant ? std::make_shared<const Tensor>(whole_row(*constant, row)) : nullptr;
  }
  KILN_ASSIGN_OR_RETURN(ops::Kernel kernel, layer_norm_of_whole_rows(node, build));
  if (expanded.empty()) return kernel;
  return ops::Kernel([kernel = std::move(kernel), expanded, row](ops::KernelContext& ctx) {
    return guard(ctx.node(), [&] {
      std::vector<const Tensor*> inputs;
      for (size_t i = 0; i < ctx.input_count(); ++i) inputs.push_back(ctx.input(i));
      std::vector<Tensor> made;
      made.reserve(expanded.size());  // stable addresses for `inputs`
      for (const auto& [i, constant] : expanded) {
        if (!constant) made.push_back(whole_row(*ctx.input(i), row));
        inputs[i] = constant ? constant.get() : &made.back();
      }
      std::vector<Tensor*> outputs;
      for (size_t i = 0; i < ctx.output_count(); ++i) outputs.push_back(ctx.output(i));
      ops::KernelContext whole_rows(ctx.node(), std::move(inputs), std::move(outputs));
      return kernel(whole_rows);
    });
  });
}

// BatchNormalization, or the kiln.InLayout wrapping one (its input and output in that layout).
bool is_wrapped_batch_norm(const ir::Node& node) { return node.domain == "kiln" && node.op_type == "InLayout"; }

// The activation normalization_activation_fusion gave a kiln.InLayout (an ONNX node's attributes
// of that name mean nothing).
std::optional<ops::Activation> fused_relu(const ir::Node& node) {
  return is_wrapped_batch_norm(node) ? ops::fused_activation(node) : std::nullopt;
}

Capability batch_norm_supports(const ir::Node& node) {
  if (is_wrapped_batch_norm(node) && node.attr_string("op") != "BatchNormalization")
    return Capability::no("kiln.InLayout of " + node.attr_string("op") + " is not a BatchNormalization");
  const int opset = is_wrapped_batch_norm(node) ? static_cast<int>(node.attr_int("op_version", 0)) : node.opset_version;
  Capability c = float_tensors(node, {0, 1, 2, 3, 4});
  if (!c.supported) return c;
  if (opset < 9) return Capability::no("BatchNormalization before opset 9 (spatial and is_test attributes)");
  if (node.attr_int("training_mode", 0) != 0) return Capability::no("BatchNormalization in training mode");
  for (size_t i = 1; i < node.outputs.size(); ++i)
    if (node.outputs[i]) return Capability::no("BatchNormalization's running mean and variance outputs");
  if (node.inputs[0]->type.shape->rank() < 2) return Capability::no("BatchNormalization of rank below 2");
  const std::optional<ops::Activation> activation = fused_relu(node);
  if (activation && !activation->is(ops::Elementwise::kRelu))
    return Capability::no("BatchNormalization with a fused " + std::string(activation->name()));
  return Capability::yes();
}

Result<ops::Kernel> build_batch_norm(const ir::Node& node, KernelBuild& build) {
  KILN_ASSIGN_OR_RETURN(const ops::ActivationLayout layout, is_wrapped_batch_norm(node) ? ops::layout_attribute(node, "layout")
                                                                                      : ops::ActivationLayout::channels_first());
  const std::vector<int64_t> stored = input_dims(node, 0);
  KILN_ASSIGN_OR_RETURN(const memory::desc data, is_wrapped_batch_norm(node) ? activation_desc(stored, layout)
                                                                              : Result<memory::desc>(row_major_desc(stored)));
  const int64_t channels = is_wrapped_batch_norm(node) ? ops::channels_first_dims(stored, layout)[1] : stored[1];
  const memory::desc channel = row_major_desc({channels});
  auto flags = dnnl::normalization_flags::use_global_stats | dnnl::normalization_flags::use_scale | dnnl::normalization_flags::use_shift;
  if (fused_relu(node)) flags = flags | dnnl::normalization_flags::fuse_norm_relu;  // a Relu (batch_norm_supports)
  const dnnl::batch_normalization_forward::desc desc(dnnl::prop_kind::forward_inference, data,
                                                     node.attr_float("epsilon", 1e-5f), flags);
  return primitive_kernel(
      {node, build}, dnnl::batch_normalization_forward(dnnl::batch_normalization_forward::primitive_desc(desc, cpu_engine())),
      [data, channel](ops::KernelContext& ctx, PrimitiveArgs& args) {
        args.set(DNNL_ARG_SRC, data, *ctx.input(0));
        args.set(DNNL_ARG_SCALE, channel, *ctx.input(1));
        args.set(DNNL_ARG_SHIFT, channel, *ctx.input(2));
        args.set(DNNL_ARG_MEAN, channel, *ctx.input(3));
        args.set(DNNL_ARG_VARIANCE, channel, *ctx.input(4));
        args.set(DNNL_ARG_DST, data, *ctx.output(0));
      });
}


// GroupNormalization and InstanceNormalization (a group per channel) over float32: the
// reference's normalize_group (vector loops), the (image, group) pairs spread over threads; the
// per-group or per-channel scale and bias read on each run.
Capability group_norm_supports(const ir::Node& node) {
  Capability c = float_tensors(node, {0, 1, 2});
  if (!c.supported) return c;
  const size_t min_rank = node.op_type == "InstanceNormalization" ? 3 : 2;
  if (node.inputs[0]->type.shape->rank() < min_rank) return Capability::no(node.op_type + " of rank below " + std::to_string(min_rank));
  return Capability::yes();
}

Result<ops::Kernel> build_group_norm(const ir::Node& node) {
  const std::vector<int64_t> x = input_dims(node, 0);
  const bool instance = node.op_type == "InstanceNormalization";
  const int64_t channels = x[1], groups = instance ? channels : node.attr_int("num_groups", 0);
  if (groups <= 0 || channels % groups != 0)
    return invalid_model(node.describe() + ": " + std::to_string(channels) + " channels do not split into " + std::to_string(groups) + " groups");
  const int64_t spatial = shape_element_count(x) / std::max<int64_t>(x[0] * channels, 1);
  const bool per_channel = instance || node.opset_version >= 21;
  const auto params = static_cast<size_t>(per_channel ? channels : groups);
  const double epsilon = node.attr_float("epsilon", 1e-5f);
  return ops::Kernel([=](ops::KernelContext& ctx) -> Status {
    const Tensor& scale = *ctx.input(1);
    const Tensor& bias = *ctx.input(2);
    if (static_cast<size_t>(scale.element_count()) != params || static_cast<size_t>(bias.element_count()) != params)
      return ctx.error("scale and bias need " + std::to_string(params) + " values");
    const std::vector<double> s(scale.data<float>(), scale.data<float>() + params), b(bias.data<float>(), bias.data<float>() + params);
    const float* in = ctx.input(0)->data<float>();
    float* out = ctx.output(0)->data<float>();
    const int64_t per_group = channels / groups, group_size = per_group * spatial, count = x[0] * groups;
#pragma omp parallel for schedule(static) if (count * group_size >= (1 << 15))
    for (int64_t ng = 0; ng < count; ++ng)
      ops::normalize_group(in + ng * group_size, out + ng * group_size, ng % groups, per_group, spatial, s.data(), b.data(), per_channel,
                           epsilon);
    return Status::ok();
  });
}

// LpNormalization and LRN over float32: the reference's per-line and per-plane functions
// (ops/local_normalizations.h) on threads.
Result<ops::Kernel> build_lp_norm(const ir::Node& node) {
  const std::vector<int64_t> x = input_dims(node, 0);
  KILN_ASSIGN_OR_RETURN(const int64_t axis, ops::normalize_axis(node.attr_int("axis", -1), static_cast<int64_t>(x.size())));
  const int64_t p = node.attr_int("p", 2);
  if (p != 1 && p != 2) return invalid_model(node.describe() + ": p must be 1 or 2, got " + std::to_string(p));
  const int64_t n = x[static_cast<size_t>(axis)];
  const int64_t inner = shape_element_count({x.begin() + axis + 1, x.end()}), outer = shape_element_count({x.begin(), x.begin() + axis});
  return ops::Kernel([=](ops::KernelContext& ctx) -> Status {
    const float* in = ctx.input(0)->data<float>();
    float* out = ctx.output(0)->data<float>();
#pragma omp parallel for schedule(static) if (outer * inner > 1 && outer * inner * n >= (1 << 15))
    for (int64_t line = 0; line < outer * inner; ++line) {
      const int64_t base = (line / inner) * n * inner + line % inner;
      ops::lp_normalize_line(in + base, out + base, n, inner, p == 1);
    }
    return Status::ok();
  });
}

Result<ops::Kernel> build_lrn(const ir::Node& node) {
  const std::vector<int64_t> x = input_dims(node, 0);
  const ops::LrnParams p{node.attr_int("size", 0), node.attr_float("alpha", 1e-4f), node.attr_float("beta", 0.75f),
                         node.attr_float("bias", 1.0f)};
  if (p.size <= 0) return invalid_model(node.describe() + ": size must be positive");
  const int64_t batches = x[0], channels = x[1], plane = shape_element_count({x.begin() + 2, x.end()});
  return ops::Kernel([=](ops::KernelContext& ctx) -> Status {
    const float* in = ctx.input(0)->data<float>();
    float* out = ctx.output(0)->data<float>();
#pragma omp parallel if (batches * channels > 1 && batches * channels * plane * p.size >= (1 << 15))
    {
      std::vector<double> squares(static_cast<size_t>(plane));
#pragma omp for schedule(static)
      for (int64_t nc = 0; nc < batches * channels; ++nc) {
        const int64_t image = nc / channels * channels * plane;
        ops::lrn_plane(in + image, out + image, channels, plane, nc % channels, p, squares.data());
      }
    }
    return Status::ok();
  });
}

}  // namespace

void add_normalization_kernels(CpuKernelTable& table) {
  table["LpNormalization"] = node_only([](const ir::Node& node) { return float_tensor_of_rank(node, 1, 8); }, build_lp_norm);
  table["LRN"] = node_only([](const ir::Node& node) { return float_tensor_of_rank(node, 3, 8); }, build_lrn);
  table["GroupNormalization"] = node_only(group_norm_supports, build_group_norm);
  table["InstanceNormalization"] = node_only(group_norm_supports, build_group_norm);
  table["MeanVarianceNormalization"] = node_only([](const ir::Node& node) { return float_tensor_of_rank(node, 1, 8); },
                                                 [](const ir::Node&) -> Result<ops::Kernel> {
                                                   return ops::Kernel([](ops::KernelContext& ctx) {
                                                     return ops::mean_variance_normalization(ctx, run_on_threads);
                                                   });
                                                 });
  table["Softmax"] = generated_or(CpuKernel{softmax_supports, build_softmax});
  table["LogSoftmax"] = generated_or(CpuKernel{softmax_supports, build_softmax});
  table["LayerNormalization"] = generated_or(CpuKernel{layer_norm_supports, build_layer_norm});
  table["BatchNormalization"] = CpuKernel{batch_norm_supports, build_batch_norm};
  // kiln.InLayout wraps pools (pool_kernels.cpp, added before) and BatchNormalization.
  table["kiln.InLayout"] = first_of(table.at("kiln.InLayout"), CpuKernel{batch_norm_supports, build_batch_norm});
}

}  // namespace kiln::providers::cpu
