// Interpolation kernels shared by the resampling ops (Resize, GridSample).
#pragma once

#include <vector>

namespace kiln::ops {

// The cubic convolution kernel (Keys, coefficient a) at distance s.
inline double cubic_kernel(double a, double s) {
  s = s < 0 ? -s : s;
  if (s <= 1) return ((a + 2) * s - (a + 3)) * s * s + 1;
  if (s < 2) return ((a * s - 5 * a) * s + 8 * a) * s - 4 * a;
  return 0;
}

// Cubic convolution weights of the taps at offsets -1, 0, 1, 2 from floor(x), for fraction
// t = x - floor(x).
inline std::vector<double> cubic_weights(double a, double t) {
  return {cubic_kernel(a, t + 1), cubic_kernel(a, t), cubic_kernel(a, 1 - t), cubic_kernel(a, 2 - t)};
}

}  // namespace kiln::ops
