// The DFT's twiddle factors, written once for the reference kernels (DFT, STFT) and the cpu
// provider's: bin f of sample k over a transform of n points turns by
// angle = -+2 pi ((f k) mod n) / n (+ for the inverse), the phase reduced exactly in integers.
// The cpu provider lays them out as a real matrix, so that a transform is one GEMM:
//   out[2f], out[2f + 1] (real, imaginary) = sum over k of in[k] (real, or re/im pairs) x M.
#pragma once

#include <cmath>
#include <cstdint>
#include <numbers>
#include <vector>

namespace kiln::ops {

inline double dft_angle(int64_t f, int64_t k, int64_t n, bool inverse) {
  return (inverse ? 1.0 : -1.0) * 2.0 * std::numbers::pi * static_cast<double>((f * k) % n) / static_cast<double>(n);
}

// M [samples * parts, bins * 2] for `samples` input points of `parts` (1 real, 2 complex) each, a
// transform of n points, scaled by 1/n for the inverse: (a + ib)(cos + i sin) = a cos - b sin +
// i (a sin + b cos).
inline std::vector<float> dft_matrix(int64_t samples, int64_t parts, int64_t bins, int64_t n, bool inverse) {
  std::vector<float> m(static_cast<size_t>(samples * parts * bins * 2));
  const double scale = inverse ? 1.0 / static_cast<double>(n) : 1.0;
  for (int64_t k = 0; k < samples; ++k)
    for (int64_t f = 0; f < bins; ++f) {
      const double angle = dft_angle(f, k, n, inverse), c = std::cos(angle) * scale, s = std::sin(angle) * scale;
      float* re_row = &m[static_cast<size_t>((k * parts) * bins * 2 + 2 * f)];
      re_row[0] = static_cast<float>(c);
      re_row[1] = static_cast<float>(s);
      if (parts == 2) {
        float* im_row = &m[static_cast<size_t>((k * parts + 1) * bins * 2 + 2 * f)];
        im_row[0] = static_cast<float>(-s);
        im_row[1] = static_cast<float>(c);
      }
    }
  return m;
}

}  // namespace kiln::ops
