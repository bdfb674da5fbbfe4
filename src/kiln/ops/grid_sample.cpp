// GridSample (opset 16) on 4-D inputs: bilinear, nearest and bicubic sampling with zeros, border
// and reflection padding, following the sampling rules of PyTorch's grid_sample, whose outputs
// the ONNX test data holds. Computed in double.
#include <cmath>

#include "kiln/ops/data_movement.h"
#include "kiln/ops/op_families.h"
#include "kiln/ops/op_helpers.h"
#include "kiln/ops/op_registry.h"

namespace kiln::ops {

namespace {

enum class Padding { kZeros, kBorder, kReflection };

struct Sampler {
  Padding padding = Padding::kZeros;
  bool align_corners = false;

  // Grid value in [-1, 1] -> pixel coordinate along an axis of `size` pixels.
  double unnormalize(double g, int64_t size) const {
    return align_corners ? (g + 1) / 2 * static_cast<double>(size - 1) : ((g + 1) * static_cast<double>(size) - 1) / 2;
  }

  static double reflect(double x, double twice_low, double twice_high) {
    if (twice_low == twice_high) return 0;
    const double low = twice_low / 2, span = (twice_high - twice_low) / 2;
    x = std::fabs(x - low);
    const double extra = std::fmod(x, span);
    const auto flips = static_cast<int64_t>(std::floor(x / span));
    return flips % 2 == 0 ? extra + low : span - extra + low;
  }

  // Applies border or reflection padding to a coordinate (zeros padding leaves it as is).
  double pad(double x, int64_t size) const {
    const double last = static_cast<double>(size - 1);
    if (padding == Padding::kBorder) return std::clamp(x, 0.0, last);
    if (padding == Padding::kReflection) {
      x = align_corners ? reflect(x, 0, 2 * last) : reflect(x, -1, 2 * static_cast<double>(size) - 1);
      return std::clamp(x, 0.0, last);
    }
    return x;
  }
};

double cubic_near(double x, double a) { return ((a + 2) * x - (a + 3)) * x * x + 1; }
double cubic_far(double x, double a) { return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a; }

Status grid_sample_infer(InferenceContext& ctx) {
  const ir::TensorType& x = ctx.input_type(0);
  const ir::TensorType& grid = ctx.input_type(1);
  ir::TensorType out{x.dtype};
  if (x.shape && grid.shape) {
    if (x.shape->rank() != 4 || grid.shape->rank() != 4) return ctx.error("X must be [N, C, H, W] and grid [N, H_out, W_out, 2]");
    out.shape = ir::Shape({(*x.shape)[0], (*x.shape)[1], (*grid.shape)[1], (*grid.shape)[2]});
  }
  const std::string mode = ctx.node().attr_string("mode", "bilinear");
  if (mode != "bilinear" && mode != "nearest" && mode != "bicubic") return ctx.error("unknown mode '" + mode + "'");
  ctx.set_output_type(0, out);
  return Status::ok();
}

Status grid_sample_kernel(KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  const Tensor& grid = *ctx.input(1);
  Tensor& y = *ctx.output(0);
  const std::string mode = ctx.node().attr_string("mode", "bilinear");
  const std::string padding = ctx.node().attr_string("padding_mode", "zeros");
  Sampler s;
  s.align_corners = ctx.node().attr_int("align_corners", 0) != 0;
  s.padding = padding == "border" ? Padding::kBorder : padding == "reflection" ? Padding::kReflection : Padding::kZeros;
  const int64_t n = x.shape()[0], c = x.shape()[1], h = x.shape()[2], w = x.shape()[3];
  const int64_t oh = y.shape()[2], ow = y.shape()[3];
  std::vector<double> out(static_cast<size_t>(y.element_count()));
  for (int64_t b = 0; b < n; ++b)
    for (int64_t i = 0; i < oh; ++i)
      for (int64_t j = 0; j < ow; ++j) {
        const int64_t g = ((b * oh + i) * ow + j) * 2;
        double ix = s.unnormalize(element_as_double(grid, g), w), iy = s.unnormalize(element_as_double(grid, g + 1), h);
        for (int64_t ch = 0; ch < c; ++ch) {
          const int64_t plane = (b * c + ch) * h * w;
          auto pixel = [&](int64_t yy, int64_t xx) {
            return yy < 0 || yy >= h || xx < 0 || xx >= w ? 0.0 : element_as_double(x, plane + yy * w + xx);
          };
          double v = 0;
          if (mode == "bicubic") {
            // Each of the 4x4 taps is padded on its own (PyTorch's get_value_bounded).
            const double fx = std::floor(ix), fy = std::floor(iy), tx = ix - fx, ty = iy - fy;
            const double a = -0.75;
            const double cx[4] = {cubic_far(tx + 1, a), cubic_near(tx, a), cubic_near(1 - tx, a), cubic_far(2 - tx, a)};
            const double cy[4] = {cubic_far(ty + 1, a), cubic_near(ty, a), cubic_near(1 - ty, a), cubic_far(2 - ty, a)};
            for (int dy = 0; dy < 4; ++dy)
              for (int dx = 0; dx < 4; ++dx) {
                const double px = s.pad(fx - 1 + dx, w), py = s.pad(fy - 1 + dy, h);
                v += cx[dx] * cy[dy] * pixel(static_cast<int64_t>(py), static_cast<int64_t>(px));
              }
          } else {
            const double px = s.pad(ix, w), py = s.pad(iy, h);
            if (mode == "nearest") {
              v = pixel(static_cast<int64_t>(std::nearbyint(py)), static_cast<int64_t>(std::nearbyint(px)));
            } else {
              const double x0 = std::floor(px), y0 = std::floor(py), tx = px - x0, ty = py - y0;
              const auto xi = static_cast<int64_t>(x0), yi = static_cast<int64_t>(y0);
              v = pixel(yi, xi) * (1 - tx) * (1 - ty) + pixel(yi, xi + 1) * tx * (1 - ty) +
                  pixel(yi + 1, xi) * (1 - tx) * ty + pixel(yi + 1, xi + 1) * tx * ty;
            }
          }
          out[static_cast<size_t>(((b * c + ch) * oh + i) * ow + j)] = v;
        }
      }
  visit_dtype(y.dtype(), [&]<class T>() {
    if constexpr (!std::is_same_v<T, std::string> && !std::is_same_v<T, bool>)
      for (size_t k = 0; k < out.size(); ++k) y.data<T>()[k] = from_double<T>(out[k]);
  });
  return Status::ok();
}

}  // namespace

void register_grid_sample_ops(OpRegistry& r) {
  r.add({"", "GridSample", 16, with_required_inputs(2, grid_sample_infer), grid_sample_kernel});
}

}  // namespace kiln::ops
