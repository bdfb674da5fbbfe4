// GridSample's 2-D fast path (grid_sample_2d.h).
#include "kiln/providers/cpu/grid_sample_2d.h"

#include <cmath>
#include <cstdint>
#include <vector>

#include "kiln/ops/grid_sample.h"
#include "kiln/providers/cpu/cpu_kernels.h"

namespace kiln::providers::cpu {
namespace {

// Up to four taps of one output point: pixel offsets in the plane and their weights.
struct PointTaps {
  int64_t offset[4];
  float weight[4];
};

// The taps of the point at pixel coordinates (y, x) of an h x w map.
PointTaps taps_at(double y, double x, int64_t h, int64_t w, const ops::GridSampleAttrs& a) {
  PointTaps t{{0, 0, 0, 0}, {0, 0, 0, 0}};
  y = ops::pad_coordinate(y, h, a);
  x = ops::pad_coordinate(x, w, a);
  auto inside = [](double p, int64_t size) { return p >= 0 && p <= static_cast<double>(size - 1); };  // false for NaN
  if (a.mode == ops::GridMode::kNearest) {
    const double ny = std::nearbyint(y), nx = std::nearbyint(x);
    if (inside(ny, h) && inside(nx, w)) {
      t.offset[0] = static_cast<int64_t>(ny) * w + static_cast<int64_t>(nx);
      t.weight[0] = 1.0f;
    }
    return t;
  }
  if (std::isnan(y) || std::isnan(x)) return t;
  const double y0 = std::floor(y), x0 = std::floor(x), ly = y - y0, lx = x - x0;
  const double ys[2] = {y0, y0 + 1}, xs[2] = {x0, x0 + 1};
  const double wy[2] = {1 - ly, ly}, wx[2] = {1 - lx, lx};
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j) {
      if (!inside(ys[i], h) || !inside(xs[j], w)) continue;
      t.offset[i * 2 + j] = static_cast<int64_t>(ys[i]) * w + static_cast<int64_t>(xs[j]);
      t.weight[i * 2 + j] = static_cast<float>(wy[i] * wx[j]);
    }
  return t;
}

}  // namespace

Capability grid_sample_2d_supports(const ir::Node& node) {
  const Capability c = float_tensors(node, {0, 1});
  if (!c.supported) return c;
  const Result<ops::GridSampleAttrs> a = ops::grid_sample_attrs(node);
  if (!a.is_ok()) return Capability::no(a.status().message());
  if (a->mode == ops::GridMode::kCubic) return Capability::no("GridSample in cubic mode runs the reference's sampler");
  const ir::Value* x = node.input(0);
  if (!x->type.shape || x->type.shape->rank() != 4) return Capability::no("GridSample of a map that is not 2-D");
  return Capability::yes();
}

Result<ops::Kernel> build_grid_sample_2d(const ir::Node& node) {
  KILN_ASSIGN_OR_RETURN(const ops::GridSampleAttrs a, ops::grid_sample_attrs(node));
  return ops::Kernel([a](ops::KernelContext& ctx) -> Status {
    const Tensor& x = *ctx.input(0);
    const Tensor& grid = *ctx.input(1);
    Tensor& y = *ctx.output(0);
    const std::vector<int64_t>& xs = x.shape();
    const int64_t batch = xs[0], channels = xs[1], h = xs[2], w = xs[3], plane = h * w;
    const int64_t points = y.shape()[2] * y.shape()[3];
    if (grid.shape() != std::vector<int64_t>{batch, y.shape()[2], y.shape()[3], 2})
      return ctx.error("grid " + shape_to_string(grid.shape()) + " does not match X " + shape_to_string(xs));
    const float* g = grid.data<float>();
    std::vector<PointTaps> taps(static_cast<size_t>(batch * points));
#pragma omp parallel for schedule(static) if (batch * points >= 4096)
    for (int64_t p = 0; p < batch * points; ++p) {  // grid (x, y) pairs
      const double gx = ops::unnormalize(g[2 * p], w, a.align_corners), gy = ops::unnormalize(g[2 * p + 1], h, a.align_corners);
      taps[static_cast<size_t>(p)] = taps_at(gy, gx, h, w, a);
    }
    const float* in = x.data<float>();
    float* out = y.data<float>();
#pragma omp parallel for schedule(static) if (batch * channels * points >= 16384)
    for (int64_t map = 0; map < batch * channels; ++map) {
      const float* src = in + map * plane;
      const PointTaps* t = taps.data() + (map / channels) * points;
      float* dst = out + map * points;
      for (int64_t i = 0; i < points; ++i)
        dst[i] = t[i].weight[0] * src[t[i].offset[0]] + t[i].weight[1] * src[t[i].offset[1]] +
                 t[i].weight[2] * src[t[i].offset[2]] + t[i].weight[3] * src[t[i].offset[3]];
    }
    return Status::ok();
  });
}

}  // namespace kiln::providers::cpu
