// cpu kernel for DeformConv over float32: per image, the columns of the moved, masked taps
// (ops/deformable_columns.h, the reference's sampling, in float32) with each input channel a task on
// OpenMP threads, then per group one oneDNN sgemm of the weights by the columns, then the bias.
#include <dnnl.h>

#include <algorithm>

#include "kiln/ops/deformable_columns.h"
#include "kiln/providers/cpu/cpu_kernels.h"
#include "kiln/providers/cpu/onednn_support.h"

namespace kiln::providers::cpu {
namespace {

Capability deform_conv_supports(const ir::Node& node) {
  std::vector<size_t> inputs;
  for (size_t i = 0; i < node.inputs.size(); ++i)
    if (node.inputs[i]) inputs.push_back(i);
  return float_tensors(node, inputs);
}

Status deform_conv(ops::KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(const ops::DeformProblem p, ops::deform_problem(ctx));
  const int64_t c = p.conv.in_channels, oc = p.conv.out_channels, group = p.conv.group;
  const int64_t per_group = c / group, out_per_group = oc / group, depth = per_group * p.taps;
  const int64_t image = p.height * p.width;
  const float* x = ctx.input(0)->data<float>();
  const float* w = ctx.input(1)->data<float>();
  const float* offsets = ctx.input(2)->data<float>();
  const float* bias = p.has_bias ? ctx.input(3)->data<float>() : nullptr;
  const float* mask = p.has_mask ? ctx.input(4)->data<float>() : nullptr;
  float* y = ctx.output(0)->data<float>();
  float* columns = run_scratch_floats(static_cast<size_t>(c * p.taps * p.positions));
  for (int64_t b = 0; b < p.conv.batch; ++b) {
    const float* batch_offsets = offsets + b * p.offset_groups * 2 * p.taps * p.positions;
    const float* batch_mask = mask ? mask + b * p.offset_groups * p.taps * p.positions : nullptr;
    run_on_threads(c, [&](int64_t ch) {
      ops::deformable_columns(p, ch, x + (b * c + ch) * image, batch_offsets, batch_mask, columns + ch * p.taps * p.positions);
    });
    for (int64_t g = 0; g < group; ++g) {
      float* out = y + (b * oc + g * out_per_group) * p.positions;
      if (dnnl_sgemm('N', 'N', out_per_group, p.positions, depth, 1.0f, w + g * out_per_group * depth, depth,
                     columns + g * depth * p.positions, p.positions, 0.0f, out, p.positions) != dnnl_success)
        return ctx.error("oneDNN sgemm failed");
    }
    if (bias) {
      float* out = y + b * oc * p.positions;
#pragma omp parallel for schedule(static) if (oc * p.positions >= (1 << 15))
      for (int64_t o = 0; o < oc; ++o)
        for (int64_t pos = 0; pos < p.positions; ++pos) out[o * p.positions + pos] += bias[o];
    }
  }
  return Status::ok();
}

}  // namespace

void add_deform_conv_kernels(CpuKernelTable& table) {
  table["DeformConv"] = node_only(deform_conv_supports, [](const ir::Node&) -> Result<ops::Kernel> { return ops::Kernel(deform_conv); });
}

}  // namespace kiln::providers::cpu
