// cpu kernel for kiln.BlockQuantizedMatMul (ops/block_quantized_matmul.h): products in the
// quantized domain, one pass over the weights per call. The activations are quantized once per
// call to 8-bit blocks of 32 (a float scale per block, its sum kept for the types with a minimum;
// Q4_0 and Q4_1 in groups of 4 blocks, ordered as their nibbles unpack), or for the K types of 256
// (one scale, sums of 16); each weight row of Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q4_K, Q5_K and Q6_K is
// multiplied with AVX2's 8-bit multiply-adds into 32-bit sums, scaled in float per block (a K
// type's sub-block scales multiply in integers); where the plan's Target has AVX-512 with VBMI and
// VNNI these types take block_quantized_rows_avx512.h's rows instead. The other block types (Q2_K,
// Q3_K, Q8_1, Q8_K) dequantize one weight row at a time into a float buffer (ggml_blocks' exact
// dequantization) and take its dot products with every activation row. Output rows are spread
// over OpenMP threads in far-apart streams (row_streams.h), each weight row read once per call.
// Built for the x86-64-v3 baseline (AVX2, FMA). A prompt's many rows take the 8-bit tile path of
// block_quantized_tiles.h (its dot instructions from the plan's Target), or for the types without
// one widen a tile of weight rows to float for oneDNN's sgemm.
#include <immintrin.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <vector>

#include "kiln/ops/block_quantized_matmul.h"
#include "kiln/providers/cpu/block_quantized_rows_avx512.h"
#include "kiln/providers/cpu/block_quantized_tiles.h"
#include "kiln/providers/cpu/cpu_kernels.h"
#include "kiln/providers/cpu/cpu_plan_state.h"
#include "kiln/providers/cpu/ggml_block_simd.h"
#include "kiln/providers/cpu/onednn_support.h"
#include "kiln/providers/cpu/row_streams.h"

namespace kiln::providers::cpu {
namespace {

// Sum of 32 products of unsigned bytes `u` (at most 63) and signed bytes `s`, as 8 int32 lanes
// converted to float.
__m256 unsigned_dot(__m256i u, __m256i s) {
  const __m256i pairs = _mm256_maddubs_epi16(u, s);
  return _mm256_cvtepi32_ps(_mm256_madd_epi16(pairs, _mm256_set1_epi16(1)));
}
// The same for two signed operands: |a| times b with a's sign.
__m256 signed_dot(__m256i a, __m256i b) { return unsigned_dot(_mm256_sign_epi8(a, a), _mm256_sign_epi8(b, a)); }

// One block of Q5_0, Q5_1 or Q8_0 times its activation block: the products into `acc`, the
// minimum's share into `minimum_terms`. The 5-bit types multiply their unsigned quants, value
// d q + m: the minimum m (Q5_0's -16 d, Q5_1's own) times the block's activation sum.
template <uint32_t kType>
inline void block_dot(const uint8_t* w, int64_t b, const ActivationBlock& a, __m256& acc, float& minimum_terms) {
  const __m256i xq = _mm256_load_si256(reinterpret_cast<const __m256i*>(a.q));
  if constexpr (kType == 8) {  // Q8_0: d, 32 int8, signed
    const uint8_t* block = w + b * 34;
    const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(block + 2));
    acc = _mm256_fmadd_ps(_mm256_set1_ps(half_at(block) * a.d), signed_dot(q, xq), acc);
  } else {
    __m256i q;
    float d = 0, minimum = 0;
    if constexpr (kType == 6) {  // Q5_0: d, fifth bits, nibbles; (q - 16) d
      const uint8_t* block = w + b * 22;
      q = _mm256_or_si256(nibbles(block + 6), fifth_bits(block + 2)), d = half_at(block), minimum = -16 * d;
    } else {  // Q5_1: d, m, fifth bits, nibbles
      static_assert(kType == 7);
      const uint8_t* block = w + b * 24;
      q = _mm256_or_si256(nibbles(block + 8), fifth_bits(block + 4)), d = half_at(block), minimum = half_at(block + 2);
    }
    acc = _mm256_fmadd_ps(_mm256_set1_ps(d * a.d), unsigned_dot(q, xq), acc);
    minimum_terms += minimum * a.sum;
  }
}

// One weight row of Q5_0, Q5_1 or Q8_0 times one activation row: sum over blocks, in kChains
// independent sums (one alone would wait on each fused multiply-add's latency, block after block).
template <uint32_t kType>
float row_dot(const uint8_t* w, const ActivationBlock* x, int64_t blocks) {
  constexpr int kChains = 4;
  __m256 acc[kChains];
  float minimum_terms[kChains] = {};
  for (__m256& a : acc) a = _mm256_setzero_ps();
  int64_t b = 0;
  for (; b + kChains <= blocks; b += kChains)
    for (int c = 0; c < kChains; ++c) block_dot<kType>(w, b + c, x[b + c], acc[c], minimum_terms[c]);
  for (; b < blocks; ++b) block_dot<kType>(w, b, x[b], acc[0], minimum_terms[0]);
  return horizontal_sum(_mm256_add_ps(_mm256_add_ps(acc[0], acc[1]), _mm256_add_ps(acc[2], acc[3]))) +
         (minimum_terms[0] + minimum_terms[1]) + (minimum_terms[2] + minimum_terms[3]);
}

// Q4_0 (d, nibbles; value (q - 8) d) and Q4_1 (d, m, nibbles; q d + m) rows over ActivationGroups
// (ggml_block_simd.h: 4 blocks, values 0-15 then 16-31): two blocks per register, their 16 bytes
// of nibbles side by side (low nibbles against values 0-15, high against 16-31), each block's sum
// in its own 4 lanes; the 4 blocks' fp16 scales (and minimums) gathered into one 64-bit word by
// integer loads and converted at once; the offsets' or minimums' share 4 blocks at a time in float.
// A row whose blocks are not a multiple of 4 ends in a group copied zero-padded to a whole one.
template <bool kMinimum>
inline void nibble_group_dot(const uint8_t* p, const ActivationGroup& a, __m256 (&acc)[2], __m128& offsets) {
  constexpr int kBytes = kMinimum ? 20 : 18, kQuantsAt = kMinimum ? 4 : 2;
  const auto halves_at = [p](int at) {
    uint16_t h[kGroupBlocks];
    for (int i = 0; i < kGroupBlocks; ++i) std::memcpy(&h[i], p + i * kBytes + at, 2);
    uint64_t word;
    std::memcpy(&word, h, 8);
    return _mm_cvtph_ps(_mm_cvtsi64_si128(static_cast<int64_t>(word)));
  };
  const __m128 x_d = _mm_load_ps(a.d), d = _mm_mul_ps(halves_at(0), x_d);
  const __m128 sums = _mm_cvtepi32_ps(_mm_load_si128(reinterpret_cast<const __m128i*>(a.negative_sums)));
  if constexpr (kMinimum) {
    offsets = _mm_fnmadd_ps(halves_at(2), _mm_mul_ps(x_d, sums), offsets);  // + m d_x sum(q)
  } else {
    offsets = _mm_fmadd_ps(d, sums, offsets);  // - 8 d d_x sum(q)
  }
  const __m256 scales = _mm256_castps128_ps256(d);
  for (int pair = 0; pair < 2; ++pair) {
    const __m256i both = _mm256_loadu2_m128i(reinterpret_cast<const __m128i*>(p + (2 * pair + 1) * kBytes + kQuantsAt),
                                             reinterpret_cast<const __m128i*>(p + 2 * pair * kBytes + kQuantsAt));
    const __m256i low = _mm256_and_si256(both, _mm256_set1_epi8(0x0F)), high = _mm256_and_si256(_mm256_srli_epi16(both, 4), _mm256_set1_epi8(0x0F));
    const __m256i x_low = _mm256_load_si256(reinterpret_cast<const __m256i*>(a.q + 32 * pair));
    const __m256i x_high = _mm256_load_si256(reinterpret_cast<const __m256i*>(a.q + 64 + 32 * pair));
    const __m256i pairs = _mm256_add_epi16(_mm256_maddubs_epi16(low, x_low), _mm256_maddubs_epi16(high, x_high));  // at most 2 * 2 * 15 * 127
    const __m256i block_sums = _mm256_madd_epi16(pairs, _mm256_set1_epi16(1));
    const __m256 pair_scales = _mm256_permutevar8x32_ps(scales, _mm256_set_epi32(2 * pair + 1, 2 * pair + 1, 2 * pair + 1, 2 * pair + 1, 2 * pair,
                                                                                  2 * pair, 2 * pair, 2 * pair));
    acc[pair] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(block_sums), pair_scales, acc[pair]);
  }
}

template <bool kMinimum>
float nibble_group_row_dot(const uint8_t* w, const ActivationGroup* x, int64_t blocks) {
  constexpr int64_t kGroupBytes = kGroupBlocks * (kMinimum ? 20 : 18);
  const int64_t full = blocks / kGroupBlocks;
  __m256 acc[2] = {_mm256_setzero_ps(), _mm256_setzero_ps()};
  __m128 offsets = _mm_setzero_ps();
  for (int64_t g = 0; g < full; ++g) nibble_group_dot<kMinimum>(w + g * kGroupBytes, x[g], acc, offsets);
  if (const int64_t rest = blocks - full * kGroupBlocks; rest > 0) {
    uint8_t padded[kGroupBytes] = {};
    std::memcpy(padded, w + full * kGroupBytes, rest * (kGroupBytes / kGroupBlocks));
    nibble_group_dot<kMinimum>(padded, x[full], acc, offsets);
  }
  const __m128 offset_pairs = _mm_add_ps(offsets, _mm_movehl_ps(offsets, offsets));
  return horizontal_sum(_mm256_add_ps(acc[0], acc[1])) + _mm_cvtss_f32(_mm_add_ss(offset_pairs, _mm_movehdup_ps(offset_pairs)));
}

// The K types' rows times activations quantized per super-block of 256 (ActivationSuperBlock, one
// d): a super-block's products and minimums sum in 32-bit integers, one conversion to float each.

// 16-bit element `element` of the 8 that `twice` holds in each half, in all 16 lanes.
inline __m256i word_in_every_lane(__m256i twice, int element) {
  const char low = static_cast<char>(2 * element), high = static_cast<char>(2 * element + 1);
  return _mm256_shuffle_epi8(twice, _mm256_setr_epi8(low, high, low, high, low, high, low, high, low, high, low, high, low, high, low, high, low,
                                                     high, low, high, low, high, low, high, low, high, low, high, low, high, low, high));
}

// Q4_K and Q5_K super-blocks: d, dmin, 12 bytes of 6-bit scales and minimums
// (k_scales_and_minimums), then [32 bytes of fifth bits,] 128 bytes of nibbles, sub-blocks 2p and
// 2p + 1 the low and high nibbles of bytes 32p to 32p + 31; value (d scale_j) q - (dmin
// minimum_j) for sub-block j of 32. A super-block's product is d d_x sum_j scale_j dot_j - dmin d_x
// sum_j minimum_j sum32_j(x).
template <bool kFifthBit>
float k_nibbles_row_dot(const uint8_t* w, const ActivationSuperBlock* x, int64_t supers) {
  constexpr int64_t kBytes = kFifthBit ? 176 : 144;
  __m256 acc = _mm256_setzero_ps(), minimum_acc = _mm256_setzero_ps();
  for (int64_t super = 0; super < supers; ++super) {
    const uint8_t* block = w + super * kBytes;
    const ActivationSuperBlock& a = x[super];
    const __m128i scales_and_minimums = k_scales_and_minimums(block + 4);
    const __m256i scales = _mm256_broadcastsi128_si256(_mm_cvtepu8_epi16(scales_and_minimums));
    const uint8_t* qs = block + 16 + (kFifthBit ? 32 : 0);
    __m256i sums[2] = {_mm256_setzero_si256(), _mm256_setzero_si256()};
    for (int p = 0; p < 4; ++p) {
      const __m256i both = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qs + 32 * p));
      __m256i q[2] = {_mm256_and_si256(both, _mm256_set1_epi8(0x0F)), _mm256_and_si256(_mm256_srli_epi16(both, 4), _mm256_set1_epi8(0x0F))};
      for (int h = 0; h < 2; ++h) {
        const int j = 2 * p + h;
        if constexpr (kFifthBit) {
          const __m256i high_bits = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(block + 16)), bit = _mm256_set1_epi8(static_cast<char>(1 << j));
          q[h] = _mm256_or_si256(q[h], _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(high_bits, bit), bit), _mm256_set1_epi8(0x10)));
        }
        const __m256i xq = _mm256_load_si256(reinterpret_cast<const __m256i*>(a.q + 32 * j));
        sums[h] = _mm256_add_epi32(sums[h], _mm256_madd_epi16(_mm256_maddubs_epi16(q[h], xq), word_in_every_lane(scales, j)));
      }
    }
    // sum_j minimum_j sum32_j(x): each minimum twice against the sums of 16.
    const __m256i minimum_terms = _mm256_madd_epi16(_mm256_cvtepu8_epi16(_mm_unpackhi_epi8(scales_and_minimums, scales_and_minimums)),
                                                    _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a.sums)));
    acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_add_epi32(sums[0], sums[1])), _mm256_set1_ps(half_at(block) * a.d), acc);
    minimum_acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(minimum_terms), _mm256_set1_ps(half_at(block + 2) * a.d), minimum_acc);
  }
  return horizontal_sum(_mm256_sub_ps(acc, minimum_acc));
}

// Q6_K super-blocks of 256 (210 bytes: 128 of low nibbles, 64 of 2-bit pairs, 16 int8 scales, d):
// each half of 128 values is 64 bytes of nibbles (bytes l and 32 + l: values l and 32 + l in their
// low nibbles, 64 + l and 96 + l in their high) and 32 bytes of pairs (bits 0-1, 2-3, 4-5, 6-7 for
// values l, 32 + l, 64 + l, 96 + l); value d scale (q - 32), a scale per 16 values. The product is
// d d_x (sum scale q x - 32 sum scale sum16(x)), 16-bit pair sums 0-7 of 32 values being values
// 0-15, 8-15 values 16-31.
float q6_k_row_dot(const uint8_t* w, const ActivationSuperBlock* x, int64_t supers) {
  __m256 acc = _mm256_setzero_ps();
  const __m256i nibble = _mm256_set1_epi8(0x0F), pair = _mm256_set1_epi8(0x30);
  for (int64_t super = 0; super < supers; ++super) {
    const uint8_t* block = w + super * 210;
    const ActivationSuperBlock& a = x[super];
    const __m256i scales16 = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(block + 192)));
    __m256i sums[2] = {_mm256_setzero_si256(), _mm256_setzero_si256()};
    for (int half = 0; half < 2; ++half) {
      const auto load = [&](int at) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(block + at)); };
      const __m256i low0 = load(64 * half), low1 = load(64 * half + 32), pairs = load(128 + 32 * half);
      const __m256i q[4] = {
          _mm256_or_si256(_mm256_and_si256(low0, nibble), _mm256_and_si256(_mm256_slli_epi16(pairs, 4), pair)),
          _mm256_or_si256(_mm256_and_si256(low1, nibble), _mm256_and_si256(_mm256_slli_epi16(pairs, 2), pair)),
          _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(low0, 4), nibble), _mm256_and_si256(pairs, pair)),
          _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(low1, 4), nibble), _mm256_and_si256(_mm256_srli_epi16(pairs, 2), pair))};
      for (int k = 0; k < 4; ++k) {
        const int j = 4 * half + k;  // values 32j to 32j + 31: scales 2j (lanes 0-7 of the pair sums) and 2j + 1
        const __m256i xq = _mm256_load_si256(reinterpret_cast<const __m256i*>(a.q + 32 * j));
        const __m256i scale = _mm256_shuffle_epi8(_mm256_permutevar8x32_epi32(scales16, _mm256_set1_epi32(j)),
                                                  _mm256_setr_epi8(0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2,
                                                                   3, 2, 3, 2, 3));
        sums[k % 2] = _mm256_add_epi32(sums[k % 2], _mm256_madd_epi16(_mm256_maddubs_epi16(q[k], xq), scale));
      }
    }
    // 32 sum_g scale_g sum16_g(x): the quants' offset.
    const __m256i offset = _mm256_madd_epi16(scales16, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a.sums)));
    const __m256i total = _mm256_sub_epi32(_mm256_add_epi32(sums[0], sums[1]), _mm256_slli_epi32(offset, 5));
    acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(total), _mm256_set1_ps(half_at(block + 208) * a.d), acc);
  }
  return horizontal_sum(acc);
}

// y [m_rows, N] = x times W^T in the quantized domain, each weight row read once: the activations
// quantized to `Activation` blocks, then every weight row's dot with every activation row, the
// rows over the threads in far-apart streams (row_streams.h).
template <class Activation, float (*kRowDot)(const uint8_t*, const Activation*, int64_t),
          void (*kQuantize)(const float*, int64_t, Activation*) = quantize_activations>
void quantized_rows(const ops::BlockQuantizedWeight& weight, const float* xs, int64_t m_rows, const uint8_t* w, float* y) {
  const int64_t k = weight.columns, n_rows = weight.rows, blocks = k / weight.type.block_values;
  const int64_t units = (k / kActivationBlock + Activation::kValues / kActivationBlock - 1) / (Activation::kValues / kActivationBlock);
  std::vector<Activation> activations(static_cast<size_t>(m_rows * units));
#pragma omp parallel for if (m_rows > 1)
  for (int64_t m = 0; m < m_rows; ++m) kQuantize(xs + m * k, k, activations.data() + m * units);
  const auto row = [&](int64_t n) {
    for (int64_t m = 0; m < m_rows; ++m) y[m * n_rows + n] = kRowDot(w + n * weight.row_bytes, activations.data() + m * units, blocks);
  };
  for_row_streams(
      n_rows,
      [&](int64_t first, int64_t stride) {
        for (int r = 0; r < kRowStreams; ++r) row(first + r * stride);
      },
      row);
}

// The quantized-domain product of a type with AVX2, when it has one.
RowProduct avx2_row_product(uint32_t type) {
  switch (type) {
    case 2: return quantized_rows<ActivationGroup, nibble_group_row_dot<false>, quantize_groups<8>>;
    case 3: return quantized_rows<ActivationGroup, nibble_group_row_dot<true>, quantize_groups<1>>;
    case 6: return quantized_rows<ActivationBlock, row_dot<6>>;
    case 7: return quantized_rows<ActivationBlock, row_dot<7>>;
    case 8: return quantized_rows<ActivationBlock, row_dot<8>>;
    case 12: return quantized_rows<ActivationSuperBlock, k_nibbles_row_dot<false>>;
    case 13: return quantized_rows<ActivationSuperBlock, k_nibbles_row_dot<true>>;
    case 14: return quantized_rows<ActivationSuperBlock, q6_k_row_dot>;
    default: return nullptr;
  }
}

float float_dot(const float* a, const float* b, int64_t count) {
  __m256 acc = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 8 <= count; i += 8) acc = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), acc);
  float sum = horizontal_sum(acc);
  for (; i < count; ++i) sum += a[i] * b[i];
  return sum;
}

// From this many activation rows (a prompt) the weights are unpacked a tile of rows at a time, which
// every row then multiplies (block_quantized_tiles.h; the types without that path widen the tile to
// float for oneDNN's sgemm), where the one-token path would unpack each weight again for every row.
constexpr int64_t kPromptRows = 16;
constexpr int64_t kFloatTileRows = 256;

Status float_product(ops::KernelContext& ctx, const ops::BlockQuantizedWeight& weight, const float* xs, int64_t m_rows, const uint8_t* w,
                     float* y) {
  const int64_t k = weight.columns;
  std::vector<float> tile(static_cast<size_t>(std::min(kFloatTileRows, weight.rows) * k));
  for (int64_t n0 = 0; n0 < weight.rows; n0 += kFloatTileRows) {
    const int64_t rows = std::min(kFloatTileRows, weight.rows - n0);
    std::atomic<bool> failed{false};
#pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < rows; ++r)
      if (!ops::dequantize(weight.type, reinterpret_cast<const char*>(w + (n0 + r) * weight.row_bytes), k, tile.data() + r * k).is_ok())
        failed = true;
    if (failed) return ctx.error("W's " + std::string(weight.type.name) + " blocks could not be dequantized");
    if (dnnl_sgemm('N', 'T', m_rows, rows, k, 1.0f, xs, k, tile.data(), k, 0.0f, y + n0, weight.rows) != dnnl_success)
      return ctx.error("oneDNN's sgemm failed");
  }
  return Status::ok();
}

Capability block_matmul_supports(const ir::Node& node) {
  const ir::Value* w = node.input(1);
  if (!w || !w->is_constant()) return Capability::no("W is computed by the graph: the kernel reads constant blocks");
  return Capability::yes();
}

Result<ops::Kernel> build_block_matmul(const ir::Node& node, KernelBuild& build) {
  KILN_ASSIGN_OR_RETURN(const ops::BlockQuantizedWeight weight, ops::block_quantized_weight(node, input_dims(node, 1)));
  const target::Target* target = plan_target(build.context);
  const RowProduct avx512 = has_avx512_row_products(target) ? avx512_row_product(weight.type.id) : nullptr;
  const RowProduct quantized = avx512 ? avx512 : avx2_row_product(weight.type.id);
  const std::string type(weight.type.name);
  const char* tile_instructions = has_tile_product(weight.type.id) ? tile_product_instructions(target) : nullptr;
  const std::string rows = avx512 ? " x 8-bit, avx512vnni" : quantized ? " x 8-bit, avx2" : " rows dequantized, float dot";
  build.evidence.record_implementation(node.name, "kiln:block-quantized " + type + rows +
                                                      "; prompts: " + (tile_instructions ? std::string("8-bit tiles, ") + tile_instructions
                                                                                         : std::string("float tiles, oneDNN sgemm")));
  return ops::Kernel([weight, quantized, tile_instructions](ops::KernelContext& ctx) -> Status {
    const Tensor& x = *ctx.input(0);
    const uint8_t* w = ctx.input(1)->data<uint8_t>();
    float* y = ctx.output(0)->data<float>();
    const int64_t k = weight.columns, n_rows = weight.rows, m_rows = k == 0 ? 0 : x.element_count() / k;
    const float* xs = x.data<float>();
    if (m_rows >= kPromptRows) {
      if (tile_instructions) return tile_product(weight, xs, m_rows, w, y, tile_instructions).with_context(ctx.node().describe());
      return float_product(ctx, weight, xs, m_rows, w, y);
    }
    if (quantized) {
      quantized(weight, xs, m_rows, w, y);
      return Status::ok();
    }
    std::atomic<bool> failed{false};
#pragma omp parallel
    {
      std::vector<float> row(static_cast<size_t>(k));
#pragma omp for schedule(static)
      for (int64_t n = 0; n < n_rows; ++n) {
        if (!ops::dequantize(weight.type, reinterpret_cast<const char*>(w + n * weight.row_bytes), k, row.data()).is_ok()) {
          failed = true;
          continue;
        }
        for (int64_t m = 0; m < m_rows; ++m) y[m * n_rows + n] = float_dot(xs + m * k, row.data(), k);
      }
    }
    return failed ? ctx.error("W's " + std::string(weight.type.name) + " blocks could not be dequantized") : Status::ok();
  });
}

}  // namespace

void add_block_quantized_matmul_kernels(CpuKernelTable& table) {
  table["kiln.BlockQuantizedMatMul"] = {block_matmul_supports, build_block_matmul};
}

}  // namespace kiln::providers::cpu
