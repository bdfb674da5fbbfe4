// Spatial geometry shared by Conv, ConvTranspose and the pooling ops: reading kernel, stride,
// dilation and pad attributes, resolving auto_pad into explicit pads and output sizes, and walking
// the image positions one kernel tap touches (im2col, col2im and pooling all use that walk).
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "kiln/ir/graph.h"
#include "kiln/ir/shape.h"
#include "kiln/status.h"

namespace kiln::ops {

// Window attributes over `kernel.size()` spatial axes. pads holds begins then ends.
struct WindowAttrs {
  std::vector<int64_t> kernel, strides, dilations, pads;
  std::string auto_pad = "NOTSET";  // NOTSET, SAME_UPPER, SAME_LOWER or VALID
  bool ceil_mode = false;
};

// Reads strides, dilations, pads, auto_pad and ceil_mode for the given kernel, with ONNX defaults
// (1, 1, 0, NOTSET, 0); InvalidModel naming the node on wrong lengths or non-positive values.
Result<WindowAttrs> read_window_attrs(const ir::Node& node, std::vector<int64_t> kernel);

// Output size of spatial axis `axis` of a sliding-window op (Conv, pools) over an input of size `in`;
// fills that axis's pads in `a` when auto_pad chooses them. InvalidModel when the window does not fit.
Result<int64_t> window_output_size(WindowAttrs& a, size_t axis, int64_t in, const ir::Node& node);

// Output spatial dims of a sliding-window op for possibly symbolic input dims (unknown where not static).
Result<std::vector<ir::Dim>> window_output_dims(WindowAttrs a, const std::vector<ir::Dim>& in, const ir::Node& node);

// Output size of axis `axis` of ConvTranspose for an input of size `in`, given output_padding and
// the requested size (output_shape attribute, or -1 when absent); fills that axis's pads in `a`.
Result<int64_t> transposed_output_size(WindowAttrs& a, size_t axis, int64_t in, int64_t output_padding,
                                       int64_t requested, const ir::Node& node);

// The correspondence between a grid of positions and an image under a window: kernel tap k of
// position p reads image coordinate p * stride - pad_begin + k * dilation on each axis.
struct TapGrid {
  std::vector<int64_t> positions;  // spatial dims of the position grid (Conv's output)
  std::vector<int64_t> image;      // spatial dims of the image (Conv's input)
  std::vector<int64_t> kernel, strides, dilations, pads_begin;

  int64_t position_count() const;
  int64_t kernel_count() const;
};

// Calls fn(position, image_offset) for every position whose kernel tap `tap` (row-major over the
// kernel dims) lands inside the image; offsets are row-major over the image dims.
template <class F>
void for_each_tap(const TapGrid& g, int64_t tap, F&& fn) {
  const size_t n = g.kernel.size();
  if (n == 0) {
    fn(int64_t{0}, int64_t{0});
    return;
  }
  // Per axis: the image coordinate each position reads for this tap (-1 outside the image).
  std::vector<std::vector<int64_t>> coords(n);
  std::vector<int64_t> image_strides(n, 1);
  for (size_t d = n; d-- > 0;) {
    const int64_t k = tap % g.kernel[d];
    tap /= g.kernel[d];
    if (d + 1 < n) image_strides[d] = image_strides[d + 1] * g.image[d + 1];
    coords[d].resize(static_cast<size_t>(g.positions[d]));
    for (int64_t p = 0; p < g.positions[d]; ++p) {
      const int64_t x = p * g.strides[d] - g.pads_begin[d] + k * g.dilations[d];
      coords[d][p] = x >= 0 && x < g.image[d] ? x : -1;
    }
  }
  const int64_t inner = g.positions[n - 1];
  const std::vector<int64_t>& last = coords[n - 1];
  const int64_t rows = g.position_count() / std::max<int64_t>(inner, 1);
  std::vector<int64_t> index(n - 1, 0);
  for (int64_t row = 0; row < rows; ++row) {
    int64_t base = 0;
    bool inside = true;
    for (size_t d = 0; d + 1 < n; ++d) {
      const int64_t x = coords[d][index[d]];
      inside = inside && x >= 0;
      base += x * image_strides[d];
    }
    if (inside)
      for (int64_t p = 0; p < inner; ++p)
        if (last[p] >= 0) fn(row * inner + p, base + last[p]);
    for (size_t d = n - 1; d-- > 0;) {
      if (++index[d] < g.positions[d]) break;
      index[d] = 0;
    }
  }
}

}  // namespace kiln::ops
