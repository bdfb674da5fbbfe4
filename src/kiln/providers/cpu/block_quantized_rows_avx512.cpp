// The AVX-512 one-token rows of kiln.BlockQuantizedMatMul (block_quantized_rows_avx512.h) for the
// 32-value types. A step takes 4 blocks of a weight row (128 values): two byte permutes (VBMI's
// vpermt2b) of two unaligned loads put values 0-15 of the 4 blocks in one register and values
// 16-31 in another (for Q4_0 and Q4_1 these are simply the low and high nibbles of the blocks' 16
// bytes), with 4 int32 lanes per block; VNNI's dot products against activations quantized in that
// order give each block's integer sum spread over its 4 lanes, and the scales (fp16, permuted the
// same way) multiply them in float, 4 blocks per instruction. Every type's quants are unsigned
// here: Q4_0's and Q5_0's offsets (8, 16) and Q8_0's (its signed bytes plus 128) start the integer
// sums as -offset sum(x_q), Q4_1's and Q5_1's minimums add m d_x sum(x_q) in float. Two weight rows
// share each activation load. The weights stay in the file's layout: nothing is repacked.
#include "kiln/providers/cpu/block_quantized_rows_avx512.h"

#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "kiln/providers/cpu/ggml_block_simd.h"
#include "kiln/providers/cpu/row_streams.h"

namespace kiln::providers::cpu {

#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512vl,avx512vbmi,avx512vnni")
// GCC 12's AVX-512 intrinsics (casts, reductions) initialise a placeholder from itself (GCC bug
// 105593, fixed in 13), which -Wuninitialized reports at every inlined use.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"

// (A named namespace inside the unnamed one: unity builds join this file's unnamed namespace with
// other files'.)
namespace {
namespace rows512 {

constexpr int kGroupBlocks = 4;  // blocks of 32 per step
constexpr int64_t kGroupValues = kGroupBlocks * kActivationBlock;

// The quants of 4 activation blocks in the order the weights unpack to: values 0-15 of blocks 0-3
// (16 each), then values 16-31. A block's sums land in int32 lanes 4i to 4i + 3.
struct GroupQuants {
  alignas(64) int8_t q[kGroupValues];
};
// Their scales and the sums the offsets or minimums multiply: -offset sum(q) for the types whose
// quants are offset (offset a power of two), -sum(q) for those with minimums. Blocks past the
// row's end are zero.
struct GroupScales {
  alignas(32) float d[kGroupBlocks];
  int32_t negative_sums[kGroupBlocks];
};

void quantize_groups(const float* x, int64_t blocks, int offset, GroupQuants* quants, GroupScales* scales) {
  const int64_t groups = (blocks + kGroupBlocks - 1) / kGroupBlocks;
  for (int64_t g = 0; g < groups; ++g) {
    GroupQuants& q = quants[g];
    GroupScales& s = scales[g];
    q = {}, s = {};
    for (int i = 0; i < kGroupBlocks && g * kGroupBlocks + i < blocks; ++i) {
      int8_t block[kActivationBlock];
      s.d[i] = quantize_values(x + (g * kGroupBlocks + i) * kActivationBlock, kActivationBlock, block);
      std::memcpy(q.q + 16 * i, block, 16);
      std::memcpy(q.q + 64 + 16 * i, block + 16, 16);
      int sum = 0;
      for (const int8_t v : block) sum += v;
      s.negative_sums[i] = -offset * sum;
    }
  }
}

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

inline LoadedActivations load_activations(const GroupQuants& q, const GroupScales& s) {
  const __m512 both = _mm512_castps256_ps512(_mm256_load_ps(s.d));  // d[4], negative_sums[4]
  const __m512i repeat = _mm512_set_epi32(3, 3, 3, 3, 2, 2, 2, 2, 1, 1, 1, 1, 0, 0, 0, 0);
  const __m512i sums = _mm512_maskz_permutexvar_epi32(0x1111, _mm512_add_epi32(repeat, _mm512_set1_epi32(4)), _mm512_castps_si512(both));
  return {load(q.q), load(q.q + 64), sums, _mm512_permutexvar_ps(repeat, both)};
}

// acc + the products of one group of a weight row (at p) and its activations.
template <class Type>
inline __m512 accumulate(const uint8_t* p, const LoadedActivations& x, __m512 acc) {
  constexpr bool kMinimum = Type::kOffset == 0;
  const Unpacked w = Type::unpack(p);
  const __m512i sums = _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(kMinimum ? _mm512_setzero_si512() : x.negative_sums, w.low, x.low), w.high, x.high);
  acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sums), _mm512_mul_ps(w.d, x.d), acc);
  if constexpr (kMinimum) acc = _mm512_fnmadd_ps(w.minimum, _mm512_mul_ps(_mm512_cvtepi32_ps(x.negative_sums), x.d), acc);
  return acc;
}

// kRows weight rows times one activation row, into out[0..kRows): each group's activations loaded
// once for all of them. A row's last group, when its blocks are not a multiple of 4, is copied
// zero-padded to a whole one.
template <class Type, int kRows>
inline void rows_dot(const uint8_t* const* rows, const GroupQuants* quants, const GroupScales* scales, int64_t blocks, float* out) {
  constexpr int64_t kGroupBytes = kGroupBlocks * Type::kBytes;
  const int64_t full = blocks / kGroupBlocks;
  __m512 acc[kRows];
#pragma GCC unroll 8
  for (int r = 0; r < kRows; ++r) acc[r] = _mm512_setzero_ps();
  for (int64_t g = 0; g < full; ++g) {
    const LoadedActivations x = load_activations(quants[g], scales[g]);
#pragma GCC unroll 8
    for (int r = 0; r < kRows; ++r) acc[r] = accumulate<Type>(rows[r] + g * kGroupBytes, x, acc[r]);
  }
  if (const int64_t rest = blocks - full * kGroupBlocks; rest > 0) {
    const LoadedActivations x = load_activations(quants[full], scales[full]);
    for (int r = 0; r < kRows; ++r) {
      uint8_t padded[kGroupBytes] = {};
      std::memcpy(padded, rows[r] + full * kGroupBytes, rest * Type::kBytes);
      acc[r] = accumulate<Type>(padded, x, acc[r]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < kRows; ++r) out[r] = _mm512_reduce_add_ps(acc[r]);
}

// y [m_rows, N] = x times W^T: the activations quantized once, then the weight rows over the
// threads, kRowStreams far-apart rows at a time (row_streams.h).
template <class Type>
void avx512_rows(const ops::BlockQuantizedWeight& weight, const float* xs, int64_t m_rows, const uint8_t* w, float* y) {
  const int64_t k = weight.columns, n_rows = weight.rows, blocks = k / kActivationBlock;
  const int64_t groups = (blocks + kGroupBlocks - 1) / kGroupBlocks;
  std::vector<GroupQuants> quants(static_cast<size_t>(m_rows * groups));
  std::vector<GroupScales> scales(static_cast<size_t>(m_rows * groups));
#pragma omp parallel for if (m_rows > 1)
  for (int64_t m = 0; m < m_rows; ++m)
    quantize_groups(xs + m * k, blocks, std::max(Type::kOffset, 1), quants.data() + m * groups, scales.data() + m * groups);
  const auto multiply = [&]<int kRows>(const int64_t(&n)[kRows]) {
    const uint8_t* rows[kRows];
    for (int r = 0; r < kRows; ++r) rows[r] = w + n[r] * weight.row_bytes;
    for (int64_t m = 0; m < m_rows; ++m) {
      float out[kRows];
      rows_dot<Type, kRows>(rows, quants.data() + m * groups, scales.data() + m * groups, blocks, out);
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

}  // namespace rows512
}  // namespace

#pragma GCC diagnostic pop
#pragma GCC pop_options

bool has_avx512_row_products(const target::Target* target) {
  if (!target) return false;
  for (const char* feature : {"avx512f", "avx512bw", "avx512vl", "avx512vbmi", "avx512vnni"})
    if (!target->has(feature)) return false;
  return true;
}

RowProduct avx512_row_product(uint32_t type) {
  switch (type) {
    using namespace rows512;
    case 2: return avx512_rows<NibbleType<kQ4_0>>;
    case 3: return avx512_rows<NibbleType<kQ4_1>>;
    case 6: return avx512_rows<NibbleType<kQ5_0>>;
    case 7: return avx512_rows<NibbleType<kQ5_1>>;
    case 8: return avx512_rows<Q8_0Type>;
    default: return nullptr;
  }
}

}  // namespace kiln::providers::cpu
