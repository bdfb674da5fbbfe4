// cpu kernel for Resize (and Upsample) in every mode (nearest, linear, cubic) and coordinate
// transformation but tf_crop_and_resize: the input taps and weights of every output coordinate on
// each axis come from the reference's own computation (ops/resize.h), so modes, rounding and
// exclude_outside match it exactly. An output row (all coordinates but the last) is a weighted sum
// of the input rows its outer taps select, each sampled through the last axis's taps, in float;
// rows are spread over OpenMP threads; when upsampling across rows, each input row is resampled
// along the last axis once and output rows blend those. Nearest modes take one tap per axis: a gather.
#include <algorithm>

#include "kiln/ops/resize.h"
#include "kiln/providers/cpu/cpu_kernels.h"
#include "kiln/providers/cpu/onednn_support.h"

namespace kiln::providers::cpu {
namespace {

Capability resize_supports(const ir::Node& node) {
  Capability c = float_tensors(node, {0});
  if (!c.supported) return c;
  if (node.inputs[0]->type.shape->rank() == 0) return Capability::no(node.op_type + " of a scalar");
  if (node.attr_string("coordinate_transformation_mode", "half_pixel") == "tf_crop_and_resize")
    return Capability::no(node.op_type + " with tf_crop_and_resize");
  return Capability::yes();
}

// One axis's taps flattened: output coordinate o reads offset[k] with weight[k] for k in
// [first[o], first[o + 1]); offsets are input indices times the axis's stride.
struct FlatTaps {
  std::vector<int64_t> first, offset;
  std::vector<float> weight;
};

FlatTaps flatten(const std::vector<ops::AxisTaps>& taps, int64_t stride) {
  FlatTaps f;
  for (const ops::AxisTaps& t : taps) {
    f.first.push_back(static_cast<int64_t>(f.offset.size()));
    for (size_t k = 0; k < t.index.size(); ++k) {
      f.offset.push_back(t.index[k] * stride);
      f.weight.push_back(static_cast<float>(t.weight[k]));
    }
  }
  f.first.push_back(static_cast<int64_t>(f.offset.size()));
  return f;
}

Status resize(ops::KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(const std::vector<std::vector<ops::AxisTaps>> taps, ops::resize_taps(ctx));
  const std::vector<int64_t>& x = ctx.input(0)->shape();
  const std::vector<int64_t>& y = ctx.output(0)->shape();
  const size_t rank = x.size();
  std::vector<FlatTaps> axes(rank);
  for (size_t d = rank, stride = 1; d-- > 0; stride *= static_cast<size_t>(x[d])) axes[d] = flatten(taps[d], static_cast<int64_t>(stride));
  const int64_t inner = y.back(), rows = ctx.output(0)->element_count() / std::max<int64_t>(inner, 1);
  if (rows == 0 || inner == 0) return Status::ok();
  const float* src = ctx.input(0)->data<float>();
  float* dst = ctx.output(0)->data<float>();
  const FlatTaps& last = axes[rank - 1];
  const bool one_tap = last.offset.size() == static_cast<size_t>(inner);
  const int64_t input_rows = ctx.input(0)->element_count() / std::max<int64_t>(x.back(), 1);
  // Upsampling across rows (more output rows than input rows) with more than one tap on the last
  // axis: each input row is resampled along the last axis once (into the run scratch), and an output
  // row is then a weighted sum of those rows, a vector loop.
  float* resampled = !one_tap && rows > input_rows ? run_scratch_floats(static_cast<size_t>(input_rows * inner)) : nullptr;
  if (resampled) {
#pragma omp parallel for schedule(static) if (input_rows * inner > (1 << 15))
    for (int64_t r = 0; r < input_rows; ++r) {
      const float* in = src + r * x.back();
      float* out = resampled + r * inner;
      for (int64_t j = 0; j < inner; ++j) {
        float sum = 0;
        for (int64_t k = last.first[static_cast<size_t>(j)]; k < last.first[static_cast<size_t>(j) + 1]; ++k)
          sum += last.weight[static_cast<size_t>(k)] * in[last.offset[static_cast<size_t>(k)]];
        out[j] = sum;
      }
    }
  }
#pragma omp parallel if (rows * inner > (1 << 15))
  {
    // The input rows one output row reads, with their weights: the product of its outer axes' taps.
    std::vector<std::pair<int64_t, float>> sources, next;
#pragma omp for schedule(static)
    for (int64_t row = 0; row < rows; ++row) {
      sources.assign(1, {0, 1.0f});
      for (int64_t rest = row, d = static_cast<int64_t>(rank) - 1; d-- > 0;) {
        const FlatTaps& a = axes[static_cast<size_t>(d)];
        const int64_t o = rest % y[static_cast<size_t>(d)];
        rest /= y[static_cast<size_t>(d)];
        next.clear();
        for (const auto& [offset, weight] : sources)
          for (int64_t k = a.first[static_cast<size_t>(o)]; k < a.first[static_cast<size_t>(o) + 1]; ++k)
            next.emplace_back(offset + a.offset[static_cast<size_t>(k)], weight * a.weight[static_cast<size_t>(k)]);
        sources.swap(next);
      }
      float* out = dst + row * inner;
      if (one_tap && sources.size() == 1 && sources[0].second == 1.0f) {
        const float* in = src + sources[0].first;
        for (int64_t j = 0; j < inner; ++j) out[j] = in[last.offset[static_cast<size_t>(j)]];
        continue;
      }
      std::fill_n(out, inner, 0.0f);
      if (resampled) {
        for (const auto& source : sources) {
          const float* in = resampled + source.first / x.back() * inner;
          const float w = source.second;
#pragma omp simd
          for (int64_t j = 0; j < inner; ++j) out[j] += w * in[j];
        }
        continue;
      }
      for (const auto& [offset, weight] : sources) {
        const float* in = src + offset;
        for (int64_t j = 0; j < inner; ++j) {
          float sum = 0;
          for (int64_t k = last.first[static_cast<size_t>(j)]; k < last.first[static_cast<size_t>(j) + 1]; ++k)
            sum += last.weight[static_cast<size_t>(k)] * in[last.offset[static_cast<size_t>(k)]];
          out[j] += weight * sum;
        }
      }
    }
  }
  return Status::ok();
}

}  // namespace

void add_resize_kernels(CpuKernelTable& table) {
  for (const char* op : {"Resize", "Upsample"})
    table[op] = node_only(resize_supports, [](const ir::Node&) -> Result<ops::Kernel> { return ops::Kernel(resize); });
}

}  // namespace kiln::providers::cpu
