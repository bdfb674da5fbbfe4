// The one dense matrix product of the reference kernels (MatMul, Gemm, Conv, ConvTranspose):
// c[M,N] = a[M,K] * b[K,N] (+ row_bias[m]), row-major. Threads take blocks of rows; within a block
// each K x N tile of b stays in cache while the block's rows pass over it (i-k-j order, so the
// innermost loop is a contiguous multiply-add the compiler vectorises).
#pragma once

#include <algorithm>
#include <cstdint>

namespace kiln::ops {

template <class A>
void blocked_gemm(const A* a, const A* b, A* c, int64_t m, int64_t k, int64_t n, const A* row_bias = nullptr) {
  constexpr int64_t kRowBlock = 16, kTileK = 256, kTileN = 512;
  const int64_t row_blocks = (m + kRowBlock - 1) / kRowBlock;
  const int64_t col_blocks = (n + kTileN - 1) / kTileN;
#pragma omp parallel for collapse(2) schedule(static) if (m * n * k > (1 << 18))
  for (int64_t rb = 0; rb < row_blocks; ++rb) {
    for (int64_t cb = 0; cb < col_blocks; ++cb) {
      const int64_t i0 = rb * kRowBlock, i1 = std::min(m, i0 + kRowBlock);
      const int64_t j0 = cb * kTileN, j1 = std::min(n, j0 + kTileN);
      for (int64_t i = i0; i < i1; ++i) std::fill(c + i * n + j0, c + i * n + j1, row_bias ? row_bias[i] : A(0));
      for (int64_t k0 = 0; k0 < k; k0 += kTileK) {
        const int64_t k1 = std::min(k, k0 + kTileK);
        for (int64_t i = i0; i < i1; ++i) {
          A* crow = c + i * n;
          for (int64_t p = k0; p < k1; ++p) {
            const A aip = a[i * k + p];
            const A* brow = b + p * n;
            for (int64_t j = j0; j < j1; ++j) crow[j] += aip * brow[j];
          }
        }
      }
    }
  }
}

}  // namespace kiln::ops
