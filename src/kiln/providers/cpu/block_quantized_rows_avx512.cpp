// The AVX-512 one-token rows of kiln.BlockQuantizedMatMul (block_quantized_rows_avx512.h). The
// weights stay in the file's layout (nothing is repacked); the activations are quantized once per
// call in the order the weights unpack to, and every kRowStreams weight rows share each activation
// load.
//
// 32-value types: a step takes 4 blocks of a row (128 values). Two byte permutes (VBMI's vpermt2b)
// of a 64-byte and a 32-byte load put values 0-15 of the 4 blocks in one register and values 16-31
// in another (for the nibble types simply the low and high nibbles of the blocks' 16 bytes), 4
// int32 lanes per block; VNNI's dot products against the activations give each block's integer
// sum spread over its lanes, and the fp16 scales, permuted the same way, multiply them in float, 4
// blocks per instruction. The quants are unsigned here: Q4_0's and Q5_0's offsets (8, 16) and
// Q8_0's (its signed bytes plus 128) start the integer sums as -offset sum(x_q); Q4_1's and Q5_1's
// minimums add m d_x sum(x_q) in float.
//
// K types (super-blocks of 256, activations quantized per 256 in natural order): 64 values per
// register, their 16-bit pair products (vpmaddubsw) multiplied by the sub-block scales and summed
// in 32 bits by one VNNI instruction (vpdpwssd); Q4_K's and Q5_K's minimums and Q6_K's offset come
// from the activations' sums of 16; one float conversion per super-block.
#include "kiln/providers/cpu/block_quantized_rows_avx512.h"

#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "kiln/providers/cpu/ggml_block_simd.h"
#include "kiln/providers/cpu/row_streams.h"

namespace kiln::providers::cpu {

#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx512f,avx512bw,avx512vl,avx512vbmi,avx512vnni"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512vl,avx512vbmi,avx512vnni")
#endif
// GCC 12's AVX-512 intrinsics (casts, reductions) initialise a placeholder from itself (GCC bug
// 105593, fixed in 13), which -Wuninitialized reports at every inlined use.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"

// Everything compiled for AVX-512 lives in a namespace named avx512 (tests/target/baseline_test.cpp
// finds 512-bit instructions nowhere else), reached only through avx512_row_product. The file is
// compiled on its own, outside unity batches (CMakeLists.txt), so that its target pragma reaches no
// other file's code.
namespace {
namespace avx512 {

// Byte indices for vpermt2b over two loads of a group, at byte offsets `first` (64 bytes) and
// `second` (at most 64 bytes past first): result byte t is the group's byte source(t).
struct Pick {
  alignas(64) uint8_t index[64];
};
template <class Source>
constexpr Pick pick(int first, int second, Source source) {
  Pick p{};
  for (int t = 0; t < 64; ++t) {
    const int s = source(t);
    p.index[t] = static_cast<uint8_t>(s < first + 64 ? s - first : 64 + s - second);
  }
  return p;
}

__m512i load(const void* p) { return _mm512_loadu_si512(p); }
__m512i permute(const Pick& pick, __m512i a, __m512i b) { return _mm512_permutex2var_epi8(a, _mm512_load_si512(pick.index), b); }
// 16 fp16 values from the low 32 bytes as floats.
__m512 halves(__m512i v) { return _mm512_cvtph_ps(_mm512_castsi512_si256(v)); }

// A group's weights unpacked: values 0-15 and 16-31 of its 4 blocks as unsigned bytes, each block's
// scale (and minimum) in its 4 lanes.
struct Unpacked {
  __m512i low, high;
  __m512 d, minimum;
};

// The 32-value types with nibbles: block bytes, where the minimum m (if any), the fifth bits (if
// any) and the 16 bytes of nibbles sit (d first), and the offset subtracted from the unsigned
// quants (0 for the types with a minimum).
struct BlockLayout {
  int bytes, minimum_at, fifth_bits_at, quants_at, offset;
};
constexpr BlockLayout kQ4_0{18, -1, -1, 2, 8}, kQ4_1{20, 2, -1, 4, 0}, kQ5_0{22, -1, 2, 6, 16}, kQ5_1{24, 2, 4, 8, 0};

// Q4_0, Q4_1, Q5_0, Q5_1: a group's 72 to 96 bytes as 64 at p and the last 32; the low nibbles are
// values 0-15, the high 16-31.
template <BlockLayout kLayout>
inline Unpacked unpack_nibbles(const uint8_t* p) {
  constexpr int kBytes = kLayout.bytes, kSecond = kGroupBlocks * kBytes - 32;
  static constexpr Pick kQuants = pick(0, kSecond, [](int t) { return kBytes * (t / 16) + kLayout.quants_at + t % 16; });
  static constexpr Pick kScales = pick(0, kSecond, [](int t) { return t < 32 ? kBytes * (t / 8) + t % 2 : 0; });
  const __m512i a = load(p), b = _mm512_castsi256_si512(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + kSecond)));
  const __m512i nibbles = permute(kQuants, a, b), mask = _mm512_set1_epi8(0x0F);
  Unpacked u{_mm512_and_si512(nibbles, mask), _mm512_and_si512(_mm512_srli_epi16(nibbles, 4), mask), halves(permute(kScales, a, b)),
             _mm512_setzero_ps()};
  if constexpr (kLayout.minimum_at >= 0) {
    static constexpr Pick kMinimums = pick(0, kSecond, [](int t) { return t < 32 ? kBytes * (t / 8) + kLayout.minimum_at + t % 2 : 0; });
    u.minimum = halves(permute(kMinimums, a, b));
  }
  if constexpr (kLayout.fifth_bits_at >= 0) {
    // Byte 16i + j of each half takes the byte of block i's 32 fifth bits that holds value j's (or
    // 16 + j's); a test against bit j % 8 adds 16 where it is set.
    static constexpr Pick kLowBits = pick(0, kSecond, [](int t) { return kBytes * (t / 16) + kLayout.fifth_bits_at + t % 16 / 8; });
    static constexpr Pick kHighBits = pick(0, kSecond, [](int t) { return kBytes * (t / 16) + kLayout.fifth_bits_at + 2 + t % 16 / 8; });
    const __m512i bit = _mm512_set1_epi64(static_cast<int64_t>(0x8040201008040201)), sixteen = _mm512_set1_epi8(0x10);
    u.low = _mm512_mask_add_epi8(u.low, _mm512_test_epi8_mask(permute(kLowBits, a, b), bit), u.low, sixteen);
    u.high = _mm512_mask_add_epi8(u.high, _mm512_test_epi8_mask(permute(kHighBits, a, b), bit), u.high, sixteen);
  }
  return u;
}

// Q8_0: d and 32 signed bytes per block of 34 (136 bytes a group: four loads), made unsigned by
// adding 128.
inline Unpacked unpack_q8_0(const uint8_t* p) {
  static constexpr Pick kLow = pick(0, 64, [](int t) { return 34 * (t / 16) + 2 + t % 16; });
  static constexpr Pick kHigh = pick(8, 72, [](int t) { return 34 * (t / 16) + 18 + t % 16; });
  static constexpr Pick kScales = pick(0, 64, [](int t) { return t < 32 ? 34 * (t / 8) + t % 2 : 0; });
  const __m512i a = load(p), b = load(p + 64), sign = _mm512_set1_epi8(static_cast<char>(0x80));
  return {_mm512_xor_si512(permute(kLow, a, b), sign), _mm512_xor_si512(permute(kHigh, load(p + 8), load(p + 72)), sign),
          halves(permute(kScales, a, b)), _mm512_setzero_ps()};
}

struct Q8_0Type {
  static constexpr int kBytes = 34, kOffset = 128;
  static Unpacked unpack(const uint8_t* p) { return unpack_q8_0(p); }
};
template <BlockLayout kLayout>
struct NibbleType {
  static constexpr int kBytes = kLayout.bytes, kOffset = kLayout.offset;
  static Unpacked unpack(const uint8_t* p) { return unpack_nibbles<kLayout>(p); }
};

// A group's activations in registers: quants, each block's d in its 4 lanes, its negative sum in
// the first of them (zero in the others).
struct LoadedActivations {
  __m512i low, high, negative_sums;
  __m512 d;
};

inline LoadedActivations load_activations(const ActivationGroup& a) {
  const __m512 both = _mm512_castps256_ps512(_mm256_load_ps(a.d));  // d[4], negative_sums[4]
  const __m512i repeat = _mm512_set_epi32(3, 3, 3, 3, 2, 2, 2, 2, 1, 1, 1, 1, 0, 0, 0, 0);
  const __m512i sums = _mm512_maskz_permutexvar_epi32(0x1111, _mm512_add_epi32(repeat, _mm512_set1_epi32(4)), _mm512_castps_si512(both));
  return {load(a.q), load(a.q + 64), sums, _mm512_permutexvar_ps(repeat, both)};
}

// acc + the products of one group of a weight row (at p) and its activations.
template <class Type>
inline __m512 accumulate_group(const uint8_t* p, const LoadedActivations& x, __m512 acc) {
  constexpr bool kMinimum = Type::kOffset == 0;
  const Unpacked w = Type::unpack(p);
  const __m512i sums = _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(kMinimum ? _mm512_setzero_si512() : x.negative_sums, w.low, x.low), w.high, x.high);
  acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sums), _mm512_mul_ps(w.d, x.d), acc);
  if constexpr (kMinimum) acc = _mm512_fnmadd_ps(w.minimum, _mm512_mul_ps(_mm512_cvtepi32_ps(x.negative_sums), x.d), acc);
  return acc;
}

// ---- the K types: super-blocks of 256 ----

// A super-block's activations in registers: 4 x 64 quants, the sums of each 16, d.
struct LoadedSuperBlock {
  __m512i q[4];
  __m256i sums;
  float d;
};

inline LoadedSuperBlock load_super_block(const ActivationSuperBlock& a) {
  return {{load(a.q), load(a.q + 64), load(a.q + 128), load(a.q + 192)}, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a.sums)), a.d};
}

// vpermw indices: 16-bit element e of 32 takes element first + e / 8 (Q6_K: a scale per 16 values,
// 8 pair products), or `low` for elements 0-15 and `high` for 16-31 (a scale per 32 values).
constexpr Pick repeat_quarters(int first) {
  Pick p{};
  for (int e = 0; e < 32; ++e) p.index[2 * e] = static_cast<uint8_t>(first + e / 8), p.index[2 * e + 1] = 0;
  return p;
}
constexpr Pick repeat_halves(int low, int high) {
  Pick p{};
  for (int e = 0; e < 32; ++e) p.index[2 * e] = static_cast<uint8_t>(e < 16 ? low : high), p.index[2 * e + 1] = 0;
  return p;
}
__m512i repeat(const Pick& pick, __m512i words) { return _mm512_permutexvar_epi16(_mm512_load_si512(pick.index), words); }

// 64 unsigned quants (at most 63) times 64 activations in 16-bit pairs, times each pair's scale
// (16-bit, from `scales` by `pick`), summed into 16 int32 lanes.
inline __m512i add_scaled_dot(__m512i sums, __m512i q, __m512i x, const Pick& pick, __m512i scales) {
  return _mm512_dpwssd_epi32(sums, _mm512_maddubs_epi16(q, x), repeat(pick, scales));
}

// Q6_K (210 bytes: 128 of low nibbles, 64 of 2-bit pairs, 16 int8 scales, d): each half of 128
// values is one 64-byte load of nibbles (low: values 0-63, high: 64-127) and 32 bytes of pairs
// (bits 0-1, 2-3, 4-5, 6-7 for values l, l + 32, l + 64, l + 96); value d scale (q - 32), a scale
// per 16.
struct Q6_KType {
  static constexpr int kBytes = 210;
  static void arrange(ActivationSuperBlock&) {}
  static __m512 accumulate(const uint8_t* s, const LoadedSuperBlock& x, __m512 acc) {
    static constexpr Pick kScales[4] = {repeat_quarters(0), repeat_quarters(4), repeat_quarters(8), repeat_quarters(12)};
    const __m256i scales16 = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(s + 192)));
    const __m512i scales = _mm512_zextsi256_si512(scales16), nibble = _mm512_set1_epi8(0x0F), pair = _mm512_set1_epi8(0x30);
    __m512i sums[2] = {_mm512_setzero_si512(), _mm512_setzero_si512()};
    for (int half = 0; half < 2; ++half) {
      const __m512i ql = load(s + 64 * half);
      const __m512i qh = _mm512_broadcast_i64x4(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + 128 + 32 * half)));
      const __m512i low = _mm512_or_si512(_mm512_and_si512(ql, nibble),
                                          _mm512_and_si512(_mm512_sllv_epi64(qh, _mm512_set_epi64(2, 2, 2, 2, 4, 4, 4, 4)), pair));
      const __m512i high = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(ql, 4), nibble),
                                           _mm512_and_si512(_mm512_srlv_epi64(qh, _mm512_set_epi64(2, 2, 2, 2, 0, 0, 0, 0)), pair));
      sums[0] = add_scaled_dot(sums[0], low, x.q[2 * half], kScales[2 * half], scales);
      sums[1] = add_scaled_dot(sums[1], high, x.q[2 * half + 1], kScales[2 * half + 1], scales);
    }
    const __m256i offset = _mm256_slli_epi32(_mm256_madd_epi16(scales16, x.sums), 5);  // 32 sum(scale sum16(x))
    const __m512i total = _mm512_sub_epi32(_mm512_add_epi32(sums[0], sums[1]), _mm512_zextsi256_si512(offset));
    return _mm512_fmadd_ps(_mm512_cvtepi32_ps(total), _mm512_set1_ps(half_at(s + 208) * x.d), acc);
  }
};

// Q4_K and Q5_K (d, dmin, 12 bytes of 6-bit scales and minimums, [32 bytes of fifth bits,] 128
// bytes of nibbles): sub-blocks 2p and 2p + 1 are the low and high nibbles of bytes 32p to 32p +
// 31, so one 64-byte load's low nibbles are sub-blocks 4P and 4P + 2, its high nibbles 4P + 1 and
// 4P + 3: the activations are arranged in that order (sub-blocks 0, 2, 1, 3, 4, 6, 5, 7). Value
// (d scale_j) q - (dmin minimum_j).
template <bool kFifthBit>
struct KNibbleType {
  static constexpr int kBytes = kFifthBit ? 176 : 144;
  static void arrange(ActivationSuperBlock& a) {
    for (int first : {32, 160}) {
      int8_t chunk[32];
      std::memcpy(chunk, a.q + first, 32);
      std::memmove(a.q + first, a.q + first + 32, 32);
      std::memcpy(a.q + first + 32, chunk, 32);
    }
  }
  static __m512 accumulate(const uint8_t* s, const LoadedSuperBlock& x, __m512 acc) {
    static constexpr Pick kScales[4] = {repeat_halves(0, 2), repeat_halves(1, 3), repeat_halves(4, 6), repeat_halves(5, 7)};
    const __m128i scales_and_minimums = k_scales_and_minimums(s + 4);
    const __m512i scales = _mm512_zextsi128_si512(_mm_cvtepu8_epi16(scales_and_minimums)), nibble = _mm512_set1_epi8(0x0F);
    const uint8_t* qs = s + 16 + (kFifthBit ? 32 : 0);
    __m512i fifth_bits = _mm512_setzero_si512();
    if constexpr (kFifthBit) fifth_bits = _mm512_broadcast_i64x4(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + 16)));
    __m512i sums[2] = {_mm512_setzero_si512(), _mm512_setzero_si512()};
    for (int half = 0; half < 2; ++half) {
      const __m512i both = load(qs + 64 * half);
      __m512i q[2] = {_mm512_and_si512(both, nibble), _mm512_and_si512(_mm512_srli_epi16(both, 4), nibble)};
      for (int h = 0; h < 2; ++h) {
        if constexpr (kFifthBit) {  // sub-blocks 4 half + h and 4 half + h + 2: bits 4 half + h and + 2 of each byte
          const int j = 4 * half + h;
          const __m512i bit = _mm512_inserti64x4(_mm512_set1_epi8(static_cast<char>(1 << j)), _mm256_set1_epi8(static_cast<char>(4 << j)), 1);
          q[h] = _mm512_mask_add_epi8(q[h], _mm512_test_epi8_mask(fifth_bits, bit), q[h], _mm512_set1_epi8(0x10));
        }
        sums[h] = add_scaled_dot(sums[h], q[h], x.q[2 * half + h], kScales[2 * half + h], scales);
      }
    }
    // sum_j minimum_j sum32_j(x): each minimum twice against the sums of 16.
    const __m256i minimum_terms = _mm256_madd_epi16(_mm256_cvtepu8_epi16(_mm_unpackhi_epi8(scales_and_minimums, scales_and_minimums)), x.sums);
    int32_t d_and_dmin;
    std::memcpy(&d_and_dmin, s, 4);
    const __m128 d = _mm_mul_ps(_mm_cvtph_ps(_mm_cvtsi32_si128(d_and_dmin)), _mm_set1_ps(x.d));  // d, dmin
    acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_add_epi32(sums[0], sums[1])), _mm512_broadcastss_ps(d), acc);
    return _mm512_fnmadd_ps(_mm512_zextps256_ps512(_mm256_cvtepi32_ps(minimum_terms)), _mm512_broadcastss_ps(_mm_movehdup_ps(d)), acc);
  }
};

// ---- rows ----

// kRows weight rows times one activation row, into out[0..kRows): each step's
// activations loaded once for all of them. A row of the 32-value types whose blocks are not a
// multiple of 4 ends in a group copied zero-padded to a whole one.
template <class Type, int kRows>
inline void rows_dot(const uint8_t* const* rows, const typename Type::Activation* x, int64_t blocks, float* out) {
  constexpr int64_t kStepBytes = Type::kStepBytes;
  const int64_t full = blocks / Type::kStepBlocks;
  __m512 acc[kRows];
#pragma GCC unroll 8
  for (int r = 0; r < kRows; ++r) acc[r] = _mm512_setzero_ps();
  for (int64_t g = 0; g < full; ++g) {
    const auto loaded = Type::load(x[g]);
#pragma GCC unroll 8
    for (int r = 0; r < kRows; ++r) acc[r] = Type::accumulate(rows[r] + g * kStepBytes, loaded, acc[r]);
  }
  if (const int64_t rest = blocks - full * Type::kStepBlocks; rest > 0) {
    const auto loaded = Type::load(x[full]);
    for (int r = 0; r < kRows; ++r) {
      uint8_t padded[kStepBytes] = {};
      std::memcpy(padded, rows[r] + full * kStepBytes, rest * Type::kBytes);
      acc[r] = Type::accumulate(padded, loaded, acc[r]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < kRows; ++r) out[r] = _mm512_reduce_add_ps(acc[r]);
}

// y [m_rows, N] = x times W^T: the activations quantized once, then the weight rows over the
// threads, kRowStreams far-apart rows at a time (row_streams.h).
template <class Type>
void avx512_rows(const ops::BlockQuantizedWeight& weight, const float* xs, int64_t m_rows, const uint8_t* w, float* y) {
  using Activation = typename Type::Activation;
  const int64_t k = weight.columns, n_rows = weight.rows, blocks = k / Type::kBlockValues;
  const int64_t steps = (blocks + Type::kStepBlocks - 1) / Type::kStepBlocks;
  std::vector<Activation> activations(static_cast<size_t>(m_rows * steps));
#pragma omp parallel for if (m_rows > 1)
  for (int64_t m = 0; m < m_rows; ++m) Type::quantize(xs + m * k, k, activations.data() + m * steps);
  const auto multiply = [&]<int kRows>(const int64_t(&n)[kRows]) {
    const uint8_t* rows[kRows];
    for (int r = 0; r < kRows; ++r) rows[r] = w + n[r] * weight.row_bytes;
    for (int64_t m = 0; m < m_rows; ++m) {
      float out[kRows];
      rows_dot<Type, kRows>(rows, activations.data() + m * steps, blocks, out);
      for (int r = 0; r < kRows; ++r) y[m * n_rows + n[r]] = out[r];
    }
  };
  for_row_streams(
      n_rows,
      [&](int64_t first, int64_t stride) {
        int64_t n[kRowStreams];
        for (int r = 0; r < kRowStreams; ++r) n[r] = first + r * stride;
        multiply(n);
      },
      [&](int64_t n) { multiply({n}); });
}

// The 32-value types step 4 blocks at a time over ActivationGroups, the K types a super-block at a
// time over ActivationSuperBlocks.
template <class Block>
struct GroupSteps : Block {
  using Activation = ActivationGroup;
  static constexpr int64_t kBlockValues = kActivationBlock, kStepBlocks = kGroupBlocks, kStepBytes = kGroupBlocks * Block::kBytes;
  static LoadedActivations load(const ActivationGroup& a) { return load_activations(a); }
  static void quantize(const float* x, int64_t k, ActivationGroup* out) { quantize_groups<std::max(Block::kOffset, 1)>(x, k, out); }
  static __m512 accumulate(const uint8_t* p, const LoadedActivations& x, __m512 acc) { return accumulate_group<Block>(p, x, acc); }
};
template <class Block>
struct SuperBlockSteps : Block {
  using Activation = ActivationSuperBlock;
  static constexpr int64_t kBlockValues = 256, kStepBlocks = 1, kStepBytes = Block::kBytes;
  static LoadedSuperBlock load(const ActivationSuperBlock& a) { return load_super_block(a); }
  static void quantize(const float* x, int64_t k, ActivationSuperBlock* out) {
    quantize_activations(x, k, out);
    for (int64_t b = 0; b < k / 256; ++b) Block::arrange(out[b]);
  }
};

}  // namespace avx512
}  // namespace

#pragma GCC diagnostic pop
#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif

bool has_avx512_row_products(const target::Target* target) {
  if (!target) return false;
  for (const char* feature : {"avx512f", "avx512bw", "avx512vl", "avx512vbmi", "avx512vnni"})
    if (!target->has(feature)) return false;
  return true;
}

RowProduct avx512_row_product(uint32_t type) {
  switch (type) {
    using namespace avx512;
    case 2: return avx512_rows<GroupSteps<NibbleType<kQ4_0>>>;
    case 3: return avx512_rows<GroupSteps<NibbleType<kQ4_1>>>;
    case 6: return avx512_rows<GroupSteps<NibbleType<kQ5_0>>>;
    case 7: return avx512_rows<GroupSteps<NibbleType<kQ5_1>>>;
    case 8: return avx512_rows<GroupSteps<Q8_0Type>>;
    case 12: return avx512_rows<SuperBlockSteps<KNibbleType<false>>>;
    case 13: return avx512_rows<SuperBlockSteps<KNibbleType<true>>>;
    case 14: return avx512_rows<SuperBlockSteps<Q6_KType>>;
    default: return nullptr;
  }
}

}  // namespace kiln::providers::cpu
