// cpu kernel for NonMaxSuppression: the reference's greedy selection (ops/non_max_suppression.h),
// its (batch, class) pairs spread over OpenMP threads when there are several.
#include "kiln/ops/non_max_suppression.h"
#include "kiln/providers/cpu/cpu_kernels.h"

namespace kiln::providers::cpu {
namespace {

void run_on_threads(int64_t count, const std::function<void(int64_t)>& task) {
#pragma omp parallel for schedule(dynamic) if (count > 1)
  for (int64_t i = 0; i < count; ++i) task(i);
}

Capability nms_supports(const ir::Node& node) {
  for (size_t i : {0, 1})
    if (!node.input(i) || !node.input(i)->type.is_tensor() || node.input(i)->type.dtype != DType::kFloat)
      return Capability::no("NonMaxSuppression of boxes and scores that are not float tensors");
  return Capability::yes();
}

}  // namespace

void add_detection_kernels(CpuKernelTable& table) {
  table["NonMaxSuppression"] = node_only(nms_supports, [](const ir::Node&) -> Result<ops::Kernel> {
    return ops::Kernel([](ops::KernelContext& ctx) { return ops::non_max_suppression(ctx, run_on_threads); });
  });
}

}  // namespace kiln::providers::cpu
