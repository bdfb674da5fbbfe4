// The pieces the cpu provider's block-quantized products share (block_quantized_matmul_kernels.cpp
// one token at a time, block_quantized_tiles.cpp for prompts): activations quantized to 8-bit blocks
// of 32, and each block type's quants of one block of 32 as 32 unsigned bytes with AVX2 (the
// x86-64-v3 baseline). Layouts: ops/ggml_blocks.cpp and ../shared/llm/README.md.
#pragma once

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace kiln::providers::cpu {

inline constexpr int64_t kActivationBlock = 32;

// `count` activations as round(x / d) into q, in [-127, 127] with d = max |x| / 127; returns d.
inline float quantize_values(const float* x, int64_t count, int8_t* q) {
  float amax = 0;
  for (int64_t j = 0; j < count; ++j) amax = std::max(amax, std::fabs(x[j]));
  const float d = amax / 127.0f, inverse = d > 0 ? 1.0f / d : 0.0f;
  for (int64_t j = 0; j < count; ++j) q[j] = static_cast<int8_t>(std::nearbyint(x[j] * inverse));
  return d;
}

// 32 activations quantized with their own d, and sum = d * sum(q) (the minimums' share).
struct ActivationBlock {
  static constexpr int64_t kValues = kActivationBlock;
  float d = 0, sum = 0;
  alignas(32) int8_t q[kActivationBlock];
};

inline void quantize_activations(const float* x, int64_t count, ActivationBlock* out) {
  for (int64_t b = 0; b < count / kActivationBlock; ++b) {
    out[b].d = quantize_values(x + b * kActivationBlock, kActivationBlock, out[b].q);
    int sum = 0;
    for (const int8_t q : out[b].q) sum += q;
    out[b].sum = out[b].d * static_cast<float>(sum);
  }
}

// 256 activations (a K type's super-block) quantized with one d, and the sum of each 16 quants (the
// K types' minimums and offsets, in integers): the products of a super-block sum in 32-bit integers
// and convert to float once.
struct ActivationSuperBlock {
  static constexpr int64_t kValues = 256;
  float d = 0;
  int16_t sums[16];
  alignas(64) int8_t q[256];
};

inline void quantize_activations(const float* x, int64_t count, ActivationSuperBlock* out) {
  for (int64_t b = 0; b < count / ActivationSuperBlock::kValues; ++b) {
    out[b].d = quantize_values(x + b * ActivationSuperBlock::kValues, ActivationSuperBlock::kValues, out[b].q);
    for (int g = 0; g < 16; ++g) {
      int sum = 0;
      for (int j = 0; j < 16; ++j) sum += out[b].q[16 * g + j];
      out[b].sums[g] = static_cast<int16_t>(sum);
    }
  }
}

// 4 activation blocks of 32 in the order the one-token rows unpack 4 weight blocks to (the
// 4-bit types' low nibbles against values 0-15, high nibbles against 16-31): q holds values 0-15
// of blocks 0-3 (16 each), then values 16-31; d the blocks' scales; negative_sums -kOffset sum(q)
// (the share of a type whose quants are offset by kOffset, or with kOffset 1 the sums its minimums
// multiply). Blocks past the row's end are zero.
inline constexpr int kGroupBlocks = 4;
struct ActivationGroup {
  static constexpr int64_t kValues = kGroupBlocks * kActivationBlock;
  alignas(64) int8_t q[kValues];
  float d[kGroupBlocks];
  int32_t negative_sums[kGroupBlocks];
};

template <int kOffset>
void quantize_groups(const float* x, int64_t count, ActivationGroup* out) {
  const int64_t blocks = count / kActivationBlock, groups = (blocks + kGroupBlocks - 1) / kGroupBlocks;
  for (int64_t g = 0; g < groups; ++g) {
    ActivationGroup& a = out[g];
    a = {};
    for (int i = 0; i < kGroupBlocks && g * kGroupBlocks + i < blocks; ++i) {
      int8_t block[kActivationBlock];
      a.d[i] = quantize_values(x + (g * kGroupBlocks + i) * kActivationBlock, kActivationBlock, block);
      std::memcpy(a.q + 16 * i, block, 16);
      std::memcpy(a.q + 64 + 16 * i, block + 16, 16);
      int sum = 0;
      for (const int8_t v : block) sum += v;
      a.negative_sums[i] = -kOffset * sum;
    }
  }
}

inline float horizontal_sum(__m256 v) {
  const __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 t = _mm_add_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_add_ss(t, _mm_shuffle_ps(t, t, 1)));
}

// A block's fp16 scale, by F16C's conversion (part of the x86-64-v3 baseline).
inline float half_at(const uint8_t* p) {
  uint16_t bits;
  std::memcpy(&bits, p, 2);
  return _cvtsh_ss(bits);
}

// 16 bytes of nibbles as 32 bytes: low nibbles are values 0-15, high nibbles 16-31.
inline __m256i nibbles(const uint8_t* p) {
  const __m256i both = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  return _mm256_and_si256(_mm256_srlv_epi64(both, _mm256_set_epi64x(4, 4, 0, 0)), _mm256_set1_epi8(0x0F));
}

// 32 bits (bit j for value j) as 32 bytes of 0x10 or 0.
inline __m256i fifth_bits(const uint8_t* p) {
  uint32_t bits;
  std::memcpy(&bits, p, 4);
  const __m256i spread = _mm256_shuffle_epi8(_mm256_set1_epi32(static_cast<int>(bits)),
                                             _mm256_set_epi64x(0x0303030303030303, 0x0202020202020202, 0x0101010101010101, 0));
  const __m256i bit = _mm256_set1_epi64x(static_cast<int64_t>(0x8040201008040201));
  return _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(spread, bit), bit), _mm256_set1_epi8(0x10));
}

// Q4_K's and Q5_K's 12 bytes of 6-bit scales and minimums (ggml_blocks.h's k_quant_scale_and_min:
// bytes 0-3 hold scales 0-3 and bytes 4-7 minimums 0-3 in their low 6 bits; scales and minimums
// 4-7 are bytes 8-11's nibbles with the top 2 bits of bytes 0-7) in a register: bytes 0-7 the
// scales, 8-15 the minimums. Reads 4 bytes past the 12 (a super-block's quants follow them).
inline __m128i k_scales_and_minimums(const uint8_t* packed) {
  const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(packed));  // words p0, p1, p2
  const __m128i words01 = _mm_shuffle_epi32(v, _MM_SHUFFLE(1, 0, 1, 0)), words22 = _mm_shuffle_epi32(v, _MM_SHUFFLE(2, 2, 2, 2));
  const __m128i low = _mm_and_si128(words01, _mm_set1_epi32(0x3F3F3F3F));  // scales 0-3, minimums 0-3
  const __m128i high = _mm_or_si128(_mm_and_si128(_mm_srlv_epi32(words22, _mm_set_epi32(4, 0, 4, 0)), _mm_set1_epi32(0x0F0F0F0F)),
                                    _mm_and_si128(_mm_srli_epi32(words01, 2), _mm_set1_epi32(0x30303030)));  // scales 4-7, minimums 4-7
  return _mm_unpacklo_epi32(low, high);
}

// Q4_K (kFifthBit false) and Q5_K super-blocks of 256: d, dmin, 12 bytes of 6-bit scales and
// minimums, [32 bytes of fifth bits,] 128 bytes of nibbles. The quants (0-15, or 0-31) of sub-block j.
template <bool kFifthBit>
__m256i k_nibble_quants(const uint8_t* super, int j) {
  const uint8_t* high = super + 16;
  const uint8_t* qs = high + (kFifthBit ? 32 : 0);
  const __m256i raw = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qs + 32 * (j / 2)));
  __m256i q = _mm256_and_si256(j % 2 ? _mm256_srli_epi16(raw, 4) : raw, _mm256_set1_epi8(0x0F));
  if constexpr (kFifthBit) {
    const __m256i high_bits = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(high));
    const __m256i bit = _mm256_set1_epi8(static_cast<char>(1 << j));
    q = _mm256_or_si256(q, _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(high_bits, bit), bit), _mm256_set1_epi8(0x10)));
  }
  return q;
}

// Q6_K super-blocks of 256 (210 bytes: 128 of low nibbles, 64 of 2-bit pairs, 16 int8 scales, d):
// the 6-bit quants (0-63, the value being d scale (q - 32)) of values 32j to 32j + 31, whose two
// halves have scales 2j and 2j + 1.
inline __m256i q6_k_quants(const uint8_t* super, int j) {
  const int half = j / 4, k = j % 4;
  const __m256i l = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(super + 64 * half + 32 * (k % 2)));
  const __m256i nibble = _mm256_and_si256(k / 2 ? _mm256_srli_epi16(l, 4) : l, _mm256_set1_epi8(0x0F));
  const __m256i p = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(super + 128 + 32 * half));
  const __m256i top = _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(p, 2 * k), _mm256_set1_epi8(3)), 4);
  return _mm256_or_si256(nibble, top);
}

}  // namespace kiln::providers::cpu
