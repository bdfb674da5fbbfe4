// GridSample of float32 2-D maps (X [N, C, H, W], grid [N, Ho, Wo, 2]) in linear or nearest mode,
// any padding and align_corners: each output point's taps (up to four pixel offsets and their
// weights, padding folded in: a tap outside the map weighs 0) are computed once per image and
// shared by every channel, and each channel's plane is then a gather of weighted taps, planes on
// OpenMP threads. Coordinates and weights follow the reference (ops/sampling.cpp) in double and
// are rounded to float. Cubic mode and other ranks run the reference's sampler.
#pragma once

#include "kiln/ir/graph.h"
#include "kiln/ops/op_registry.h"
#include "kiln/providers/provider.h"

namespace kiln::providers::cpu {

Capability grid_sample_2d_supports(const ir::Node& node);
Result<ops::Kernel> build_grid_sample_2d(const ir::Node& node);

}  // namespace kiln::providers::cpu
