// Interpolation kernels shared by the resampling ops (Resize, GridSample).
#pragma once

#include <vector>

namespace kiln::ops {

// Cubic convolution weights (Keys, coefficient a) of the taps at offsets -1, 0, 1, 2 from floor(x),
// for fraction t = x - floor(x).
inline std::vector<double> cubic_weights(double a, double t) {
  auto near = [a](double s) { return ((a + 2) * s - (a + 3)) * s * s + 1; };          // |s| <= 1
  auto far = [a](double s) { return ((a * s - 5 * a) * s + 8 * a) * s - 4 * a; };    // 1 < |s| < 2
  return {far(t + 1), near(t), near(1 - t), far(2 - t)};
}

}  // namespace kiln::ops
