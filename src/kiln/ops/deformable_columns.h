// DeformConv's columns (its im2col), shared by the reference (in double) and the cpu provider (in
// float32, then a GEMM): for one input channel, each tap's row of output positions holds the image
// sampled bilinearly (corners outside the image count 0) at the tap's position moved by its learned
// offset, times its mask. deform_problem checks the operands and gives the geometry.
#pragma once

#include <cmath>
#include <cstdint>

#include "kiln/ops/conv.h"
#include "kiln/ops/op_registry.h"

namespace kiln::ops {

struct DeformProblem {
  ConvProblem conv;
  int64_t height = 0, width = 0, kernel_w = 0, taps = 0, out_w = 0, positions = 0;
  int64_t offset_groups = 1;
  bool has_mask = false, has_bias = false;
};

// Inputs X [N, C, H, W], W [oC, C / group, kH, kW], offset [N, offset_group * 2 * kH * kW, oH, oW],
// B [oC] (optional), mask [N, offset_group * kH * kW, oH, oW] (optional); output 0 sized by the
// shape rule. InvalidArgument naming the operand whose shape does not fit.
Result<DeformProblem> deform_problem(const KernelContext& ctx);

// The image's value at (h, w), bilinear, corners outside the image counting 0.
template <class T>
T sample_or_zero(const T* image, int64_t height, int64_t width, T h, T w) {
  if (h <= T(-1) || h >= static_cast<T>(height) || w <= T(-1) || w >= static_cast<T>(width)) return T(0);
  const auto h0 = static_cast<int64_t>(std::floor(h)), w0 = static_cast<int64_t>(std::floor(w));
  const T lh = h - static_cast<T>(h0), lw = w - static_cast<T>(w0);
  T v = 0;
  for (int64_t dy = 0; dy < 2; ++dy)
    for (int64_t dx = 0; dx < 2; ++dx) {
      const int64_t y = h0 + dy, x = w0 + dx;
      if (y < 0 || y >= height || x < 0 || x >= width) continue;
      v += (dy ? lh : 1 - lh) * (dx ? lw : 1 - lw) * image[y * width + x];
    }
  return v;
}

// Channel `channel`'s taps x positions block of the columns, from that channel's image and the
// batch's offsets and mask (mask null when absent).
template <class T>
void deformable_columns(const DeformProblem& p, int64_t channel, const T* image, const T* offsets, const T* mask, T* columns) {
  const ConvProblem& c = p.conv;
  const int64_t og = channel / (c.in_channels / p.offset_groups);
  for (int64_t t = 0; t < p.taps; ++t) {
    const T* dy = offsets + (og * 2 * p.taps + 2 * t) * p.positions;
    const T* dx = dy + p.positions;
    const T* m = mask ? mask + (og * p.taps + t) * p.positions : nullptr;
    const int64_t tap_h = (t / p.kernel_w) * c.grid.dilations[0] - c.grid.pads_begin[0];
    const int64_t tap_w = (t % p.kernel_w) * c.grid.dilations[1] - c.grid.pads_begin[1];
    T* row = columns + t * p.positions;
    for (int64_t pos = 0; pos < p.positions; ++pos) {
      const T h = static_cast<T>((pos / p.out_w) * c.grid.strides[0] + tap_h) + dy[pos];
      const T w = static_cast<T>((pos % p.out_w) * c.grid.strides[1] + tap_w) + dx[pos];
      row[pos] = (m ? m[pos] : T(1)) * sample_or_zero(image, p.height, p.width, h, w);
    }
  }
}

}  // namespace kiln::ops
