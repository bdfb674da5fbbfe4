// The 8-bit prompt path of the cpu provider's kiln.BlockQuantizedMatMul (block_quantized_tiles.h).
// Each type's blocks unpack to 32 quants as bytes (unsigned 0-63 with a minimum, or Q8_0's signed
// bytes), two scales (one per 16 values: the K types with 16-value sub-blocks differ there) and
// the minimums (one per 32 values, two for Q6_K). A weight value is scale q + minimum, so a row
// product is sum(scale d_x dot(q, x_q)) + sum(minimum block_sum(x)): the dots in 8-bit
// integers, 4 activation rows by NR weight rows in registers; the minimums' sums one sgemm.
// The dot instructions come from the Target: AVX-512 VNNI (32 registers: 4 by 4), AVX-VNNI or
// AVX2's multiply-adds (16 registers: 4 by 2); the functions for the VNNI ones are compiled for
// those features alone and called only when the target has them.
#include "kiln/providers/cpu/block_quantized_tiles.h"

#include <immintrin.h>

#include <algorithm>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "kiln/providers/cpu/ggml_block_simd.h"
#include "kiln/providers/cpu/onednn_support.h"

namespace kiln::providers::cpu {
namespace {

constexpr int64_t kTileRows = 256;   // weight rows unpacked at a time: their quants stay in L2
constexpr int kActivationRows = 4;   // activation rows per register tile

// ---- unpacking ----

using Unpack = void (*)(const uint8_t* row, int64_t blocks, uint8_t* q, float* scales, float* minimums);

struct TileType {
  Unpack unpack;
  bool is_signed;    // quants are signed bytes (Q8_0) and there are no minimums
  int min_groups;    // minimums per block of 32: 1, or 2 (one per 16 values)
};

void store(uint8_t* q, __m256i v) { _mm256_storeu_si256(reinterpret_cast<__m256i*>(q), v); }

// Q4_0 (2), Q4_1 (3), Q5_0 (6), Q5_1 (7), Q8_0 (8): blocks of 32 with one scale d.
template <uint32_t kType>
void unpack_32_value_blocks(const uint8_t* row, int64_t blocks, uint8_t* q, float* scales, float* minimums) {
  for (int64_t b = 0; b < blocks; ++b) {
    float d = 0, minimum = 0;
    if constexpr (kType == 2) {  // (q - 8) d
      const uint8_t* block = row + b * 18;
      d = half_at(block), minimum = -8 * d;
      store(q + 32 * b, nibbles(block + 2));
    } else if constexpr (kType == 3) {  // q d + m
      const uint8_t* block = row + b * 20;
      d = half_at(block), minimum = half_at(block + 2);
      store(q + 32 * b, nibbles(block + 4));
    } else if constexpr (kType == 6) {  // (q - 16) d
      const uint8_t* block = row + b * 22;
      d = half_at(block), minimum = -16 * d;
      store(q + 32 * b, _mm256_or_si256(nibbles(block + 6), fifth_bits(block + 2)));
    } else if constexpr (kType == 7) {  // q d + m
      const uint8_t* block = row + b * 24;
      d = half_at(block), minimum = half_at(block + 2);
      store(q + 32 * b, _mm256_or_si256(nibbles(block + 8), fifth_bits(block + 4)));
    } else {  // Q8_0: q d, q signed
      static_assert(kType == 8);
      const uint8_t* block = row + b * 34;
      d = half_at(block);
      std::memcpy(q + 32 * b, block + 2, 32);
    }
    scales[2 * b] = scales[2 * b + 1] = d;
    if (minimums) minimums[b] = minimum;
  }
}

// Q4_K and Q5_K: sub-block j of a super-block is (d scale_j) q - (dmin minimum_j).
template <bool kFifthBit>
void unpack_k_nibbles(const uint8_t* row, int64_t blocks, uint8_t* q, float* scales, float* minimums) {
  constexpr int64_t kBytes = kFifthBit ? 176 : 144;
  for (int64_t b = 0; b < blocks; ++b) {
    const uint8_t* super = row + b / 8 * kBytes;
    const int j = static_cast<int>(b % 8);
    const auto [scale, minimum] = ops::k_quant_scale_and_min(super + 4, j);
    store(q + 32 * b, k_nibble_quants<kFifthBit>(super, j));
    scales[2 * b] = scales[2 * b + 1] = half_at(super) * static_cast<float>(scale);
    minimums[b] = -half_at(super + 2) * static_cast<float>(minimum);
  }
}

// Q6_K: values 32j..32j+31 of a super-block are d scale_(2j or 2j+1) (q - 32).
void unpack_q6_k(const uint8_t* row, int64_t blocks, uint8_t* q, float* scales, float* minimums) {
  for (int64_t b = 0; b < blocks; ++b) {
    const uint8_t* super = row + b / 8 * 210;
    const int j = static_cast<int>(b % 8);
    const auto* sub_scales = reinterpret_cast<const int8_t*>(super + 192);
    const float d = half_at(super + 208);
    store(q + 32 * b, q6_k_quants(super, j));
    for (int h = 0; h < 2; ++h) {
      scales[2 * b + h] = d * static_cast<float>(sub_scales[2 * j + h]);
      minimums[2 * b + h] = -32 * scales[2 * b + h];
    }
  }
}

std::optional<TileType> tile_type(uint32_t type) {
  switch (type) {
    case 2: return TileType{unpack_32_value_blocks<2>, false, 1};
    case 3: return TileType{unpack_32_value_blocks<3>, false, 1};
    case 6: return TileType{unpack_32_value_blocks<6>, false, 1};
    case 7: return TileType{unpack_32_value_blocks<7>, false, 1};
    case 8: return TileType{unpack_32_value_blocks<8>, true, 0};
    case 12: return TileType{unpack_k_nibbles<false>, false, 1};
    case 13: return TileType{unpack_k_nibbles<true>, false, 1};
    case 14: return TileType{unpack_q6_k, false, 2};
    default: return std::nullopt;
  }
}

// ---- register tiles ----

// 8 int32 sums of 4 products each of unsigned bytes `u` (at most 127 with AVX2: its pairs add in
// 16 bits) and signed bytes `s`.
struct Avx2Dot {
  static __m256i dot(__m256i u, __m256i s) { return _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), _mm256_set1_epi16(1)); }
};
struct Avx512VnniDot {
  [[gnu::target("avx512vnni,avx512vl")]] static __m256i dot(__m256i u, __m256i s) {
    return _mm256_dpbusd_epi32(_mm256_setzero_si256(), u, s);
  }
};
struct AvxVnniDot {
  [[gnu::target("avxvnni")]] static __m256i dot(__m256i u, __m256i s) { return _mm256_dpbusd_avx_epi32(_mm256_setzero_si256(), u, s); }
};

struct UnpackedTile {
  const uint8_t* q;       // [rows][blocks][32]
  const float* scales;    // [rows][blocks][2]
  int64_t blocks;
};

// y[m][n0 + n] for MR activation rows (x, rows `blocks` apart) and NR weight rows from n0.
template <class Dot, bool kSigned, int MR, int NR>
inline void register_tile(const UnpackedTile& t, const ActivationBlock* x, int64_t n0, float* y, int64_t ldy) {
  __m256 acc[MR][NR];
  for (int m = 0; m < MR; ++m)
    for (int n = 0; n < NR; ++n) acc[m][n] = _mm256_setzero_ps();
  const uint8_t* q = t.q + n0 * t.blocks * 32;
  const float* scales = t.scales + n0 * t.blocks * 2;
  for (int64_t b = 0; b < t.blocks; ++b) {
    __m256i w[NR], magnitude[NR];
    __m256 ws[NR];
    for (int n = 0; n < NR; ++n) {
      w[n] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q + (n * t.blocks + b) * 32));
      if constexpr (kSigned) magnitude[n] = _mm256_sign_epi8(w[n], w[n]);
      const float* s = scales + (n * t.blocks + b) * 2;
      ws[n] = _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_broadcast_ss(s)), _mm_broadcast_ss(s + 1), 1);
    }
    for (int m = 0; m < MR; ++m) {
      const ActivationBlock& a = x[m * t.blocks + b];
      const __m256i xq = _mm256_load_si256(reinterpret_cast<const __m256i*>(a.q));
      const __m256 dx = _mm256_set1_ps(a.d);
      for (int n = 0; n < NR; ++n) {
        const __m256i sums = kSigned ? Dot::dot(magnitude[n], _mm256_sign_epi8(xq, w[n])) : Dot::dot(w[n], xq);
        acc[m][n] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sums), _mm256_mul_ps(ws[n], dx), acc[m][n]);
      }
    }
  }
  for (int m = 0; m < MR; ++m)
    for (int n = 0; n < NR; ++n) y[m * ldy + n0 + n] = horizontal_sum(acc[m][n]);
}

// `rows` activation rows (at most kActivationRows) times every row of the tile.
template <class Dot, bool kSigned, int NR>
inline void tile_rows(const UnpackedTile& t, int64_t tile_rows, const ActivationBlock* x, int64_t rows, float* y, int64_t ldy) {
  const int64_t whole = tile_rows / NR * NR;
  for (int64_t n = 0; n < whole; n += NR) {
    if (rows == kActivationRows) {
      register_tile<Dot, kSigned, kActivationRows, NR>(t, x, n, y, ldy);
    } else {
      for (int64_t m = 0; m < rows; ++m) register_tile<Dot, kSigned, 1, NR>(t, x + m * t.blocks, n, y + m * ldy, ldy);
    }
  }
  for (int64_t m = 0; m < rows; ++m)
    for (int64_t n = whole; n < tile_rows; ++n) register_tile<Dot, kSigned, 1, 1>(t, x + m * t.blocks, n, y + m * ldy, ldy);
}

using TileRows = void (*)(const UnpackedTile&, int64_t, const ActivationBlock*, int64_t, float*, int64_t);

[[gnu::flatten]] void avx2_unsigned(const UnpackedTile& t, int64_t n, const ActivationBlock* x, int64_t r, float* y, int64_t l) {
  tile_rows<Avx2Dot, false, 2>(t, n, x, r, y, l);
}
[[gnu::flatten]] void avx2_signed(const UnpackedTile& t, int64_t n, const ActivationBlock* x, int64_t r, float* y, int64_t l) {
  tile_rows<Avx2Dot, true, 2>(t, n, x, r, y, l);
}
[[gnu::flatten, gnu::target("avx512vnni,avx512vl")]] void avx512_vnni_unsigned(const UnpackedTile& t, int64_t n, const ActivationBlock* x,
                                                                                int64_t r, float* y, int64_t l) {
  tile_rows<Avx512VnniDot, false, 4>(t, n, x, r, y, l);
}
[[gnu::flatten, gnu::target("avx512vnni,avx512vl")]] void avx512_vnni_signed(const UnpackedTile& t, int64_t n, const ActivationBlock* x,
                                                                              int64_t r, float* y, int64_t l) {
  tile_rows<Avx512VnniDot, true, 4>(t, n, x, r, y, l);
}
[[gnu::flatten, gnu::target("avxvnni")]] void avx_vnni_unsigned(const UnpackedTile& t, int64_t n, const ActivationBlock* x, int64_t r,
                                                                 float* y, int64_t l) {
  tile_rows<AvxVnniDot, false, 2>(t, n, x, r, y, l);
}
[[gnu::flatten, gnu::target("avxvnni")]] void avx_vnni_signed(const UnpackedTile& t, int64_t n, const ActivationBlock* x, int64_t r,
                                                               float* y, int64_t l) {
  tile_rows<AvxVnniDot, true, 2>(t, n, x, r, y, l);
}

TileRows tile_rows_for(const char* instructions, bool is_signed) {
  const std::string name = instructions;
  if (name == "avx512vnni") return is_signed ? avx512_vnni_signed : avx512_vnni_unsigned;
  if (name == "avxvnni") return is_signed ? avx_vnni_signed : avx_vnni_unsigned;
  return is_signed ? avx2_signed : avx2_unsigned;
}

}  // namespace

bool has_tile_product(uint32_t type) { return tile_type(type).has_value(); }

const char* tile_product_instructions(const target::Target* target) {
  if (target && target->has("avx512vnni") && target->has("avx512vl")) return "avx512vnni";
  if (target && target->has("avxvnni")) return "avxvnni";
  return "avx2";
}

Status tile_product(const ops::BlockQuantizedWeight& weight, const float* x, int64_t m_rows, const uint8_t* w, float* y,
                    const char* instructions) {
  const std::optional<TileType> type = tile_type(weight.type.id);
  if (!type) return internal_error("no 8-bit prompt path for " + std::string(weight.type.name));
  const int64_t k = weight.columns, n_rows = weight.rows, blocks = k / kActivationBlock, groups = blocks * type->min_groups;
  const TileRows multiply = tile_rows_for(instructions, type->is_signed);
  try {
    std::vector<ActivationBlock> activations(static_cast<size_t>(m_rows * blocks));
    std::vector<float> block_sums(static_cast<size_t>(m_rows * groups));  // d_x sum(x_q) per group of the minimums
#pragma omp parallel for schedule(static)
    for (int64_t m = 0; m < m_rows; ++m) {
      ActivationBlock* row = activations.data() + m * blocks;
      quantize_activations(x + m * k, k, row);
      for (int64_t b = 0; b < blocks && groups > 0; ++b) {
        if (type->min_groups == 1) {
          block_sums[static_cast<size_t>(m * groups + b)] = row[b].sum;
          continue;
        }
        for (int h = 0; h < 2; ++h) {
          int sum = 0;
          for (int j = 16 * h; j < 16 * h + 16; ++j) sum += row[b].q[j];
          block_sums[static_cast<size_t>(m * groups + 2 * b + h)] = row[b].d * static_cast<float>(sum);
        }
      }
    }
    const int64_t tile = std::min(kTileRows, n_rows);
    std::vector<uint8_t> quants(static_cast<size_t>(tile * blocks * 32));
    std::vector<float> scales(static_cast<size_t>(tile * blocks * 2)), minimums(static_cast<size_t>(tile * std::max<int64_t>(groups, 1)));
    for (int64_t n0 = 0; n0 < n_rows; n0 += kTileRows) {
      const int64_t rows = std::min(kTileRows, n_rows - n0);
#pragma omp parallel for schedule(static)
      for (int64_t r = 0; r < rows; ++r)
        type->unpack(w + (n0 + r) * weight.row_bytes, blocks, quants.data() + r * blocks * 32, scales.data() + r * blocks * 2,
                     groups > 0 ? minimums.data() + r * groups : nullptr);
      const UnpackedTile unpacked{quants.data(), scales.data(), blocks};
      const int64_t steps = (m_rows + kActivationRows - 1) / kActivationRows;
#pragma omp parallel for schedule(static)
      for (int64_t s = 0; s < steps; ++s) {
        const int64_t m0 = s * kActivationRows;
        multiply(unpacked, rows, activations.data() + m0 * blocks, std::min<int64_t>(kActivationRows, m_rows - m0), y + m0 * n_rows + n0,
                 n_rows);
      }
      if (groups > 0 && dnnl_sgemm('N', 'T', m_rows, rows, groups, 1.0f, block_sums.data(), groups, minimums.data(), groups, 1.0f, y + n0,
                                   n_rows) != dnnl_success)
        return backend_failure("oneDNN's sgemm failed on the minimums of " + std::string(weight.type.name) + " weights");
    }
  } catch (const std::bad_alloc&) {
    return allocation_failure("cannot allocate the 8-bit tiles of a " + std::to_string(m_rows) + "-row product");
  }
  return Status::ok();
}

}  // namespace kiln::providers::cpu
