// Attention products for a few query rows (few_row_attention.h). Scores: 8 keys at a time, their
// rows (8 x depth floats) loaded from memory once and reused by every query row from the
// first-level cache; for each query row 8 sums of depth / 8 fused multiply-adds, reduced across
// lanes into the 8 keys' scores at once. Values: 32 keys at a time (their rows stay in the
// first-level cache), each output row kept in registers while it takes them in.
#include "kiln/providers/cpu/few_row_attention.h"

#include <immintrin.h>

#include <algorithm>

#include "kiln/providers/cpu/ggml_block_simd.h"

namespace kiln::providers::cpu {
namespace {

constexpr int64_t kMaxRows = 16;     // beyond, sgemm's packing pays for itself
constexpr int64_t kMaxWidth = 128;   // values' width held in registers (16 of AVX2's 8-float vectors)
constexpr int64_t kKeyBlock = 8;     // keys per step of the scores
constexpr int64_t kValueBlock = 32;  // keys per step of the values

// [sum(a[0]), ..., sum(a[7])]: the 8 vectors' lanes summed.
__m256 sum_each(const __m256 (&a)[8]) {
  const __m256 t0 = _mm256_hadd_ps(a[0], a[1]), t1 = _mm256_hadd_ps(a[2], a[3]);
  const __m256 t2 = _mm256_hadd_ps(a[4], a[5]), t3 = _mm256_hadd_ps(a[6], a[7]);
  const __m256 u0 = _mm256_hadd_ps(t0, t1), u1 = _mm256_hadd_ps(t2, t3);  // per 128-bit half: sums of a[0..3], a[4..7]
  return _mm256_add_ps(_mm256_permute2f128_ps(u0, u1, 0x20), _mm256_permute2f128_ps(u0, u1, 0x31));
}

template <int64_t kWidth>
void values_fixed_width(const float* p, int64_t rows, int64_t keys, const float* v, int64_t ldv, float* y, int64_t ldy) {
  constexpr int64_t kVectors = kWidth / 8;
  for (int64_t r = 0; r < rows; ++r) std::fill(y + r * ldy, y + r * ldy + kWidth, 0.0f);
  for (int64_t j0 = 0; j0 < keys; j0 += kValueBlock) {
    const int64_t j1 = std::min(keys, j0 + kValueBlock);
    for (int64_t r = 0; r < rows; ++r) {
      float* out = y + r * ldy;
      __m256 acc[kVectors];
      for (int64_t c = 0; c < kVectors; ++c) acc[c] = _mm256_loadu_ps(out + 8 * c);
      for (int64_t j = j0; j < j1; ++j) {
        const __m256 weight = _mm256_set1_ps(p[r * keys + j]);
        for (int64_t c = 0; c < kVectors; ++c) acc[c] = _mm256_fmadd_ps(weight, _mm256_loadu_ps(v + j * ldv + 8 * c), acc[c]);
      }
      for (int64_t c = 0; c < kVectors; ++c) _mm256_storeu_ps(out + 8 * c, acc[c]);
    }
  }
}

}  // namespace

bool has_few_row_attention(int64_t rows, int64_t depth, int64_t width) {
  return rows <= kMaxRows && depth % 8 == 0 && (width == 64 || width == 128);
}

void few_row_scores(const float* q, int64_t ldq, const float* k, int64_t ldk, int64_t rows, int64_t keys, int64_t depth, float scale,
                    float* scores) {
  const __m256 scale_vector = _mm256_set1_ps(scale);
  int64_t j0 = 0;
  for (; j0 + kKeyBlock <= keys; j0 += kKeyBlock)
    for (int64_t r = 0; r < rows; ++r) {
      __m256 acc[8];
      for (__m256& a : acc) a = _mm256_setzero_ps();
      for (int64_t d = 0; d < depth; d += 8) {
        const __m256 query = _mm256_loadu_ps(q + r * ldq + d);
        for (int64_t i = 0; i < kKeyBlock; ++i) acc[i] = _mm256_fmadd_ps(query, _mm256_loadu_ps(k + (j0 + i) * ldk + d), acc[i]);
      }
      _mm256_storeu_ps(scores + r * keys + j0, _mm256_mul_ps(sum_each(acc), scale_vector));
    }
  for (; j0 < keys; ++j0)
    for (int64_t r = 0; r < rows; ++r) {
      __m256 acc = _mm256_setzero_ps();
      for (int64_t d = 0; d < depth; d += 8) acc = _mm256_fmadd_ps(_mm256_loadu_ps(q + r * ldq + d), _mm256_loadu_ps(k + j0 * ldk + d), acc);
      scores[r * keys + j0] = horizontal_sum(acc) * scale;
    }
}

void few_row_values(const float* p, int64_t rows, int64_t keys, const float* v, int64_t ldv, int64_t width, float* y, int64_t ldy) {
  if (width == 64) {
    values_fixed_width<64>(p, rows, keys, v, ldv, y, ldy);
  } else {
    values_fixed_width<128>(p, rows, keys, v, ldv, y, ldy);
  }
}

}  // namespace kiln::providers::cpu
