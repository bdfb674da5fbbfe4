// Softmax of one row of floats in place, with AVX2 (the x86-64-v3 baseline every supported machine
// has): for kernels whose rows change length from call to call (attention over a key/value cache
// valid up to the tokens seen), where a oneDNN softmax primitive would have to be built per length.
// exp is a degree-6 polynomial after range reduction by ln 2 (relative error below 2e-7 over the
// float range); inputs below -87.3 (the masked fill, -FLT_MAX) give exactly 0.
#pragma once

#include <immintrin.h>

#include <cmath>
#include <cstdint>

namespace kiln::providers::cpu {

inline __m256 exp_avx2(__m256 x) {
  const __m256 underflow = _mm256_cmp_ps(x, _mm256_set1_ps(-87.3f), _CMP_LT_OQ);
  x = _mm256_min_ps(_mm256_max_ps(x, _mm256_set1_ps(-87.3f)), _mm256_set1_ps(88.7f));
  const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);  // ln 2 in two parts
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
  __m256 p = _mm256_set1_ps(1.0f / 720);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 120));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 24));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 6));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.5f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
  const __m256i two_n = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  return _mm256_andnot_ps(underflow, _mm256_mul_ps(p, _mm256_castsi256_ps(two_n)));
}

// row[i] = exp(row[i] - max) / sum over the row, for `count` >= 1 values.
inline void softmax_row(float* row, int64_t count) {
  __m256 top8 = _mm256_set1_ps(row[0]);
  int64_t i = 0;
  for (; i + 8 <= count; i += 8) top8 = _mm256_max_ps(top8, _mm256_loadu_ps(row + i));
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, top8);
  float top = lanes[0];
  for (float lane : lanes) top = std::fmax(top, lane);
  for (; i < count; ++i) top = std::fmax(top, row[i]);
  const __m256 shift = _mm256_set1_ps(top);
  __m256 sum8 = _mm256_setzero_ps();
  for (i = 0; i + 8 <= count; i += 8) {
    const __m256 e = exp_avx2(_mm256_sub_ps(_mm256_loadu_ps(row + i), shift));
    _mm256_storeu_ps(row + i, e);
    sum8 = _mm256_add_ps(sum8, e);
  }
  _mm256_store_ps(lanes, sum8);
  double sum = 0;
  for (float lane : lanes) sum += lane;
  for (; i < count; ++i) sum += (row[i] = std::exp(row[i] - top));
  const __m256 scale = _mm256_set1_ps(static_cast<float>(1.0 / sum));
  for (i = 0; i + 8 <= count; i += 8) _mm256_storeu_ps(row + i, _mm256_mul_ps(_mm256_loadu_ps(row + i), scale));
  for (; i < count; ++i) row[i] *= static_cast<float>(1.0 / sum);
}

}  // namespace kiln::providers::cpu
