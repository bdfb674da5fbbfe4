// cpu kernel for kiln.BlockQuantizedMatMul (ops/block_quantized_matmul.h): products in the
// quantized domain, one pass over the weights per call. The activations are quantized once per
// call to 8-bit blocks of 32 (a float scale per block, its sum kept for the types with a minimum),
// or for the K types of 256 (one scale, sums of 16); each weight row of Q4_0, Q4_1, Q5_0, Q5_1,
// Q8_0, Q4_K, Q5_K and Q6_K is multiplied block by block with AVX2's 8-bit multiply-adds into
// 32-bit sums, scaled in float per block (a K type's sub-block scales multiply in integers); where
// the plan's Target has AVX-512 with VBMI and VNNI these types take block_quantized_rows_avx512.h's
// rows instead. The other block types (Q2_K, Q3_K, Q8_1, Q8_K)
// dequantize one weight row at a time into a float buffer (ggml_blocks' exact dequantization) and
// take its dot products with every activation row. Output rows are spread over OpenMP threads in
// far-apart streams (row_streams.h), each weight row read once per call. Built for the x86-64-v3
// baseline (AVX2, FMA). A prompt's many rows take the 8-bit tile path of block_quantized_tiles.h
// (its dot instructions from the plan's Target), or for the types without one widen a tile of
// weight rows to float for oneDNN's sgemm.
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

// One block of a 32-value type times its activation block: the products into `acc`, the
// minimum's share into `minimum_terms`. Every type but Q8_0 multiplies its unsigned quants, value
// d q + m: the minimum m (Q4_0's -8 d, Q5_0's -16 d, Q4_1's and Q5_1's own) times the block's
// activation sum.
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
    if constexpr (kType == 2) {  // Q4_0: d, nibbles; (q - 8) d
      const uint8_t* block = w + b * 18;
      q = nibbles(block + 2), d = half_at(block), minimum = -8 * d;
    } else if constexpr (kType == 3) {  // Q4_1: d, m, nibbles
      const uint8_t* block = w + b * 20;
      q = nibbles(block + 4), d = half_at(block), minimum = half_at(block + 2);
    } else if constexpr (kType == 6) {  // Q5_0: d, fifth bits, nibbles; (q - 16) d
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

// One weight row of a 32-value type times one activation row: sum over blocks, in kChains
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

// The K types' rows times activations quantized per super-block of 256 (ActivationSuperBlock, one
// d): a super-block's products and minimums sum in 32-bit integers, one conversion to float each.

// Q4_K and Q5_K super-blocks: d, dmin, 12 bytes of 6-bit scales and minimums
// (k_scales_and_minimums), then [32 bytes of fifth bits,] 128 bytes of nibbles; value (d scale_j) q - (dmin minimum_j) for
// sub-block j of 32. A super-block's product is d d_x sum_j scale_j dot_j - dmin d_x sum_j
// minimum_j sum_j(x).
template <bool kFifthBit>
float k_nibbles_row_dot(const uint8_t* w, const ActivationSuperBlock* x, int64_t supers) {
  constexpr int64_t kBytes = kFifthBit ? 176 : 144;
  __m256 acc = _mm256_setzero_ps();
  float minimum_terms = 0;
  for (int64_t super = 0; super < supers; ++super) {
    const uint8_t* block = w + super * kBytes;
    const ActivationSuperBlock& a = x[super];
    uint8_t scales[8], minimums[8];
    k_scales_and_minimums(block + 4, scales, minimums);
    __m256i sums = _mm256_setzero_si256();
    for (int j = 0; j < 8; ++j) {
      const __m256i q = k_nibble_quants<kFifthBit>(block, j);
      const __m256i xq = _mm256_load_si256(reinterpret_cast<const __m256i*>(a.q + 32 * j));
      sums = _mm256_add_epi32(sums, _mm256_madd_epi16(_mm256_maddubs_epi16(q, xq), _mm256_set1_epi16(scales[j])));
    }
    int minimum_sum = 0;
    for (int j = 0; j < 8; ++j) minimum_sum += minimums[j] * (a.sums[2 * j] + a.sums[2 * j + 1]);
    acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sums), _mm256_set1_ps(half_at(block) * a.d), acc);
    minimum_terms += half_at(block + 2) * a.d * static_cast<float>(minimum_sum);
  }
  return horizontal_sum(acc) - minimum_terms;
}

// Q6_K super-blocks of 256: an int8 scale per 16 values, 6-bit quants q (0-63) with value
// d scale (q - 32) (layout in ops/ggml_blocks.cpp); the product is d d_x (sum scale q x - 32 sum
// scale sum16(x)), 16-bit pair sums 0-7 of a block of 32 being values 0-15, 8-15 values 16-31.
float q6_k_row_dot(const uint8_t* w, const ActivationSuperBlock* x, int64_t supers) {
  __m256 acc = _mm256_setzero_ps();
  for (int64_t super = 0; super < supers; ++super) {
    const uint8_t* block = w + super * 210;
    const ActivationSuperBlock& a = x[super];
    const auto* scales = reinterpret_cast<const int8_t*>(block + 192);
    __m256i sums = _mm256_setzero_si256();
    for (int j = 0; j < 8; ++j) {
      const __m256i xq = _mm256_load_si256(reinterpret_cast<const __m256i*>(a.q + 32 * j));
      const __m256i scale = _mm256_set_m128i(_mm_set1_epi16(scales[2 * j + 1]), _mm_set1_epi16(scales[2 * j]));
      sums = _mm256_add_epi32(sums, _mm256_madd_epi16(_mm256_maddubs_epi16(q6_k_quants(block, j), xq), scale));
    }
    // 32 sum_g scale_g sum16_g(x): the quants' offset.
    const __m256i scales16 = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(scales)));
    const __m256i offset = _mm256_madd_epi16(scales16, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a.sums)));
    sums = _mm256_sub_epi32(sums, _mm256_slli_epi32(offset, 5));
    acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sums), _mm256_set1_ps(half_at(block + 208) * a.d), acc);
  }
  return horizontal_sum(acc);
}

// y [m_rows, N] = x times W^T in the quantized domain, each weight row read once: the activations
// quantized to `Activation` blocks, then every weight row's dot with every activation row, the
// rows over the threads in far-apart streams (row_streams.h).
template <class Activation, float (*kRowDot)(const uint8_t*, const Activation*, int64_t)>
void quantized_rows(const ops::BlockQuantizedWeight& weight, const float* xs, int64_t m_rows, const uint8_t* w, float* y) {
  const int64_t k = weight.columns, n_rows = weight.rows, blocks = k / Activation::kValues;
  std::vector<Activation> activations(static_cast<size_t>(m_rows * blocks));
#pragma omp parallel for if (m_rows > 1)
  for (int64_t m = 0; m < m_rows; ++m) quantize_activations(xs + m * k, k, activations.data() + m * blocks);
  const auto row = [&](int64_t n) {
    for (int64_t m = 0; m < m_rows; ++m) y[m * n_rows + n] = kRowDot(w + n * weight.row_bytes, activations.data() + m * blocks, blocks);
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
    case 2: return quantized_rows<ActivationBlock, row_dot<2>>;
    case 3: return quantized_rows<ActivationBlock, row_dot<3>>;
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
