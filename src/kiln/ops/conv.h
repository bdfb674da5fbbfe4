// Convolution pieces shared by Conv, ConvTranspose and the quantized convolutions (QLinearConv,
// ConvInteger): the output-shape rule over any input positions, the problem resolved for concrete
// shapes, and the forward pass (im2col + the blocked GEMM) for any accumulation type.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "kiln/ir/graph.h"
#include "kiln/ir/shape.h"
#include "kiln/ops/blocked_gemm.h"
#include "kiln/ops/op_registry.h"
#include "kiln/ops/spatial_geometry.h"
#include "kiln/status.h"

namespace kiln::ops {

// Which node inputs hold X, W and the optional bias (bias: nullopt when the op has none).
struct ConvInputs {
  size_t x = 0, w = 1;
  std::optional<size_t> bias = 2;
};

// The output shape of a convolution (ConvTranspose when `transposed`): checks ranks, group, channel
// and bias counts and the window attributes; nullopt when X's rank is unknown.
Result<std::optional<ir::Shape>> conv_output_shape(const InferenceContext& ctx, const ConvInputs& in, bool transposed);

// A convolution resolved for concrete shapes. For Conv the grid's positions are the output's
// spatial dims and its image the input's; ConvTranspose swaps the two.
struct ConvProblem {
  int64_t batch = 0, in_channels = 0, out_channels = 0, group = 1;
  TapGrid grid;
};

// Resolves auto_pad and the window for X, W and Y of these concrete shapes (InvalidArgument naming
// the node when kernel_shape disagrees with W).
Result<ConvProblem> conv_problem(const ir::Node& node, const std::vector<int64_t>& x, const std::vector<int64_t>& w,
                                 const std::vector<int64_t>& y, bool transposed);

// Conv (not transposed) of concrete tensors: Y = conv(X, W) + B, any float type (the reference
// kernel's body, also used by kiln.FusedConv).
Status conv_reference(const ir::Node& node, const Tensor& x, const Tensor& w, const Tensor* bias, Tensor& y);

// Conv for one batch item and group: im2col (skipped for 1x1 stride-1 unpadded kernels) then GEMM.
template <class Acc>
void conv_group(const ConvProblem& p, const Acc* x, const Acc* w, const Acc* bias, Acc* y, bool parallel) {
  const TapGrid& g = p.grid;
  const int64_t taps = g.kernel_count(), positions = g.position_count();
  const int64_t channels = p.in_channels / p.group, rows = channels * taps;
  const bool direct = taps == 1 && g.positions == g.image &&
                      std::all_of(g.strides.begin(), g.strides.end(), [](int64_t s) { return s == 1; }) &&
                      std::all_of(g.pads_begin.begin(), g.pads_begin.end(), [](int64_t v) { return v == 0; });
  std::vector<Acc> col(direct ? 0 : static_cast<size_t>(rows * positions));
  if (!direct) {
    const int64_t image = shape_element_count(g.image);
#pragma omp parallel for schedule(static) if (parallel)
    for (int64_t r = 0; r < rows; ++r) {
      Acc* row = col.data() + r * positions;
      const Acc* xc = x + (r / taps) * image;
      std::fill(row, row + positions, Acc(0));
      for_each_tap(g, r % taps, [&](int64_t pos, int64_t off) { row[pos] = xc[off]; });
    }
  }
  // Inside the per-group parallel loop (parallel == false) the product's own loop runs on one
  // thread: OpenMP does not nest parallel regions by default.
  blocked_gemm(w, direct ? x : col.data(), y, p.out_channels / p.group, rows, positions, bias);
}

// y = conv(x, w) + bias over the whole batch; x, w, bias and y are dense row-major buffers.
template <class Acc>
void conv_forward(const ConvProblem& p, const Acc* x, const Acc* w, const Acc* bias, Acc* y) {
  const int64_t cin = p.in_channels / p.group, cout = p.out_channels / p.group;
  const int64_t image = shape_element_count(p.grid.image), positions = p.grid.position_count();
  const int64_t weights_per_group = cout * cin * p.grid.kernel_count();
  for (int64_t n = 0; n < p.batch; ++n) {
    // Many groups (depthwise): one group per thread; one group: the inner loops split.
#pragma omp parallel for schedule(static) if (p.group > 1)
    for (int64_t grp = 0; grp < p.group; ++grp)
      conv_group(p, x + (n * p.in_channels + grp * cin) * image, w + grp * weights_per_group,
                 bias ? bias + grp * cout : nullptr, y + (n * p.out_channels + grp * cout) * positions, p.group == 1);
  }
}

}  // namespace kiln::ops
