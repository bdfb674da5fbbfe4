// cpu kernel for nearest-neighbour Resize (and Upsample): the source index of every output
// coordinate on each axis comes from the reference's own tap computation (ops/resize.h), so every
// coordinate transformation and rounding mode matches it exactly; the copy then runs row by row
// over OpenMP threads. Linear and cubic modes stay on cpu_ref.
#include <algorithm>

#include "kiln/ops/resize.h"
#include "kiln/providers/cpu/cpu_kernels.h"

namespace kiln::providers::cpu {
namespace {

Capability resize_supports(const ir::Node& node) {
  Capability c = float_tensors(node, {0});
  if (!c.supported) return c;
  if (node.inputs[0]->type.shape->rank() == 0) return Capability::no(node.op_type + " of a scalar");
  const std::string mode = node.attr_string("mode", "nearest");
  if (mode != "nearest") return Capability::no(node.op_type + " in mode '" + mode + "' (cpu has nearest)");
  if (node.attr_string("coordinate_transformation_mode", "half_pixel") == "tf_crop_and_resize")
    return Capability::no(node.op_type + " with tf_crop_and_resize");
  return Capability::yes();
}

Status resize_nearest(ops::KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(const std::vector<std::vector<ops::AxisTaps>> taps, ops::resize_taps(ctx));
  const std::vector<int64_t>& x = ctx.input(0)->shape();
  const std::vector<int64_t>& y = ctx.output(0)->shape();
  const size_t rank = x.size();
  // source[d][o]: the input offset (index times stride) that output coordinate o of axis d reads.
  std::vector<std::vector<int64_t>> source(rank);
  for (size_t d = rank, stride = 1; d-- > 0; stride *= static_cast<size_t>(x[d]))
    for (const ops::AxisTaps& t : taps[d]) source[d].push_back(t.index[0] * static_cast<int64_t>(stride));
  const int64_t inner = y.back(), rows = ctx.output(0)->element_count() / std::max<int64_t>(inner, 1);
  const float* src = ctx.input(0)->data<float>();
  float* dst = ctx.output(0)->data<float>();
  const std::vector<int64_t>& last = source[rank - 1];
#pragma omp parallel for schedule(static) if (rows * inner > (1 << 15))
  for (int64_t row = 0; row < rows; ++row) {
    int64_t offset = 0;
    for (int64_t rest = row, d = static_cast<int64_t>(rank) - 1; d-- > 0;) {
      offset += source[static_cast<size_t>(d)][static_cast<size_t>(rest % y[static_cast<size_t>(d)])];
      rest /= y[static_cast<size_t>(d)];
    }
    float* out = dst + row * inner;
    for (int64_t j = 0; j < inner; ++j) out[j] = src[offset + last[static_cast<size_t>(j)]];
  }
  return Status::ok();
}

}  // namespace

void add_resize_kernels(CpuKernelTable& table) {
  for (const char* op : {"Resize", "Upsample"})
    table[op] = node_only(resize_supports, [](const ir::Node&) -> Result<ops::Kernel> { return ops::Kernel(resize_nearest); });
}

}  // namespace kiln::providers::cpu
