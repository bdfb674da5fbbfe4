// cpu kernels for NonMaxSuppression, GridSample, RoiAlign and AffineGrid: the reference's kernels
// (the greedy selection of ops/non_max_suppression.h, the sampling of ops/grid_sample.h), their
// independent tasks ((batch, class) selections, (image, channel) maps, (roi, channel) bins, rows of
// grid points) spread over OpenMP threads; GridSample of float32 2-D maps in linear or nearest mode
// takes its own fast path (grid_sample_2d.h).
#include "kiln/ops/grid_sample.h"
#include "kiln/ops/non_max_suppression.h"
#include "kiln/ops/op_helpers.h"
#include "kiln/providers/cpu/cpu_kernels.h"
#include "kiln/providers/cpu/grid_sample_2d.h"

namespace kiln::providers::cpu {
namespace {

Capability nms_supports(const ir::Node& node) {
  for (size_t i : {0, 1})
    if (!node.input(i) || !node.input(i)->type.is_tensor() || node.input(i)->type.dtype != DType::kFloat)
      return Capability::no("NonMaxSuppression of boxes and scores that are not float tensors");
  return Capability::yes();
}

Capability grid_sample_supports(const ir::Node& node) {
  for (size_t i : {0, 1})
    if (!node.input(i) || !node.input(i)->type.is_tensor() || !ops::is_float_dtype(node.input(i)->type.dtype))
      return Capability::no("GridSample of inputs that are not float tensors");
  return Capability::yes();
}

}  // namespace

void add_detection_kernels(CpuKernelTable& table) {
  table["GridSample"] = first_of(node_only(grid_sample_2d_supports, build_grid_sample_2d),
                                 node_only(grid_sample_supports, [](const ir::Node&) -> Result<ops::Kernel> {
                                   return ops::Kernel([](ops::KernelContext& ctx) { return ops::grid_sample(ctx, run_on_threads); });
                                 }));
  table["RoiAlign"] = node_only(
      [](const ir::Node& node) {
        Capability c = grid_sample_supports(node);  // X and rois: float tensors
        return c.supported ? c : Capability::no("RoiAlign of inputs that are not float tensors");
      },
      [](const ir::Node&) -> Result<ops::Kernel> {
        return ops::Kernel([](ops::KernelContext& ctx) { return ops::roi_align(ctx, run_on_threads); });
      });
  table["AffineGrid"] = node_only(
      [](const ir::Node& node) {
        const ir::Value* theta = node.input(0);
        return theta && theta->type.is_tensor() && ops::is_float_dtype(theta->type.dtype) ? Capability::yes()
                                                                                          : Capability::no("AffineGrid of a theta that is not a float tensor");
      },
      [](const ir::Node&) -> Result<ops::Kernel> {
        return ops::Kernel([](ops::KernelContext& ctx) { return ops::affine_grid(ctx, run_on_threads); });
      });
  table["NonMaxSuppression"] = node_only(nms_supports, [](const ir::Node&) -> Result<ops::Kernel> {
    return ops::Kernel([](ops::KernelContext& ctx) { return ops::non_max_suppression(ctx, run_on_threads); });
  });
}

}  // namespace kiln::providers::cpu
