// The sampling kernels of GridSample (opsets 16 and 20), RoiAlign and AffineGrid (sampling.cpp),
// shared by the reference and the cpu provider: GridSample samples each (image, channel) map at
// every grid point, RoiAlign pools each (roi, channel)'s bins, AffineGrid maps each row of points
// by its image's matrix, in double, one task per map, (roi, channel) or row; the caller says how
// the tasks run (in order, or on its threads).
#pragma once

#include "kiln/ops/op_registry.h"
#include "kiln/ops/task_runner.h"

namespace kiln::ops {

enum class GridMode { kLinear, kNearest, kCubic };
enum class GridPadding { kZeros, kBorder, kReflection };

struct GridSampleAttrs {
  GridMode mode = GridMode::kLinear;
  GridPadding padding = GridPadding::kZeros;
  bool align_corners = false;
};

// A GridSample node's attributes, checked (InvalidModel naming an unknown mode or padding).
Result<GridSampleAttrs> grid_sample_attrs(const ir::Node& node);
// A grid coordinate in [-1, 1] as a pixel coordinate on an axis of `size` pixels.
double unnormalize(double coord, int64_t size, bool align_corners);
// Border or reflection padding applied to a pixel coordinate (zeros padding leaves it as is).
double pad_coordinate(double x, int64_t size, const GridSampleAttrs& a);

// Samples input 0 at input 1's grid into output 0 (sized by the shape rule).
Status grid_sample(KernelContext& ctx, const TaskRunner& run);
// Pools inputs 0 (X), 1 (rois), 2 (batch_indices) into output 0 (sized by the shape rule).
Status roi_align(KernelContext& ctx, const TaskRunner& run);
// The grid of input 0's affine matrices (theta [N, 2, 3] or [N, 3, 4]) over input 1's size.
Status affine_grid(KernelContext& ctx, const TaskRunner& run);

}  // namespace kiln::ops
