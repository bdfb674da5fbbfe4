// The 8-bit prompt path of the cpu provider's kiln.BlockQuantizedMatMul (block_quantized_tiles.h).
// Each type's blocks unpack to 32 quants as bytes (unsigned 0-63 with a minimum, or Q8_0's signed
// bytes), two scales (one per 16 values: the K types with 16-value sub-blocks differ there) and
// the minimums (one per 32 values, two for Q6_K). A weight value is scale q + minimum, so a row
// product is sum(scale d_x dot(q, x_q)) + sum(minimum block_sum(x)): the dots in 8-bit
// integers over weight rows interleaved 8 at a time (one instruction: 8 rows' sums in 8 lanes,
// converted to float once per block), 4 activation rows by 1 to 3 groups of 8 weight rows in
// registers; the minimums' sums one sgemm. The dot instructions come from the Target: AVX-512
// VNNI (32 registers: 3 groups), AVX-VNNI or AVX2's multiply-adds (16 registers: 1 group); the
// functions for the VNNI ones are compiled for those features alone and called only when the
// target has them.
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
  int min_groups;    // minimums per block of 32: 0 (Q8_0), 1, or 2 (one per 16 values)
  int halves;        // scales per block of 32: 1, or 2 (one per 16 values)
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
    case 2: return TileType{unpack_32_value_blocks<2>, false, 1, 1};
    case 3: return TileType{unpack_32_value_blocks<3>, false, 1, 1};
    case 6: return TileType{unpack_32_value_blocks<6>, false, 1, 1};
    case 7: return TileType{unpack_32_value_blocks<7>, false, 1, 1};
    case 8: return TileType{unpack_32_value_blocks<8>, true, 0, 1};
    case 12: return TileType{unpack_k_nibbles<false>, false, 1, 1};
    case 13: return TileType{unpack_k_nibbles<true>, false, 1, 1};
    case 14: return TileType{unpack_q6_k, false, 2, 2};
    default: return std::nullopt;
  }
}

// ---- the interleaved tile ----

// Weight rows are unpacked, a tile at a time, into groups of 8 (kLanes) interleaved 4 bytes at a
// time: for group g and block b, 256 bytes [chunk c (values 4c..4c+3)][row r of the group][4], so
// one 32-byte load holds a chunk of 8 rows and one dot instruction against 4 broadcast activation
// bytes gives 8 rows' partial sums in 8 lanes, never summed across lanes. Scales follow the same
// order: [group][block][half (two_scales only)][row], the minimums stay per row for the sgemm.
constexpr int64_t kLanes = 8;

struct InterleavedTile {
  const uint8_t* q;       // [groups][blocks][8 chunks][8 rows][4]
  const float* scales;    // [groups][blocks][halves][8 rows]
  int64_t blocks;
};

// Unpacks row r of a tile (its blocks at `row`) into the interleaved tile; `quants` and
// `row_scales` are the row's scratch ([blocks][32], [blocks][2]).
void interleave_row(const TileType& type, const uint8_t* row, int64_t r, int64_t blocks, uint8_t* quants, float* row_scales, float* minimums,
                    uint8_t* tile_q, float* tile_scales) {
  type.unpack(row, blocks, quants, row_scales, minimums);
  const int halves = type.halves;
  const int64_t group = r / kLanes, lane = r % kLanes;
  for (int64_t b = 0; b < blocks; ++b) {
    uint8_t* q = tile_q + (group * blocks + b) * 256 + lane * 4;
    for (int64_t c = 0; c < 8; ++c) std::memcpy(q + c * 32, quants + b * 32 + c * 4, 4);
    float* s = tile_scales + ((group * blocks + b) * halves) * kLanes + lane;
    for (int h = 0; h < halves; ++h) s[h * kLanes] = row_scales[2 * b + h];
  }
}

// ---- register tiles ----

// acc + the 8 int32 sums of 4 products each of unsigned bytes `u` (at most 127 with AVX2: its pairs
// add in 16 bits) and signed bytes `s`.
// add_dot_pair: two such dots at once, for unsigned quants of at most 63 (every type but Q8_0):
// AVX2 adds the two 16-bit pair sums (each at most 2 * 63 * 127) before widening them.
struct Avx2Dot {
  static __m256i add_dot(__m256i acc, __m256i u, __m256i s) {
    return _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), _mm256_set1_epi16(1)));
  }
  static __m256i add_dot_pair(__m256i acc, __m256i u0, __m256i s0, __m256i u1, __m256i s1) {
    const __m256i pairs = _mm256_add_epi16(_mm256_maddubs_epi16(u0, s0), _mm256_maddubs_epi16(u1, s1));
    return _mm256_add_epi32(acc, _mm256_madd_epi16(pairs, _mm256_set1_epi16(1)));
  }
};
struct Avx512VnniDot {
  [[gnu::target("avx512vnni,avx512vl")]] static __m256i add_dot(__m256i acc, __m256i u, __m256i s) { return _mm256_dpbusd_epi32(acc, u, s); }
  [[gnu::target("avx512vnni,avx512vl")]] static __m256i add_dot_pair(__m256i acc, __m256i u0, __m256i s0, __m256i u1, __m256i s1) {
    return _mm256_dpbusd_epi32(_mm256_dpbusd_epi32(acc, u0, s0), u1, s1);
  }
};
struct AvxVnniDot {
  [[gnu::target("avxvnni")]] static __m256i add_dot(__m256i acc, __m256i u, __m256i s) { return _mm256_dpbusd_avx_epi32(acc, u, s); }
  [[gnu::target("avxvnni")]] static __m256i add_dot_pair(__m256i acc, __m256i u0, __m256i s0, __m256i u1, __m256i s1) {
    return _mm256_dpbusd_avx_epi32(_mm256_dpbusd_avx_epi32(acc, u0, s0), u1, s1);
  }
};

// y[m][8 (g0 + g) + lane] for MR activation rows (x, rows `blocks` apart) and G groups of 8 weight
// rows from group g0; the last group may hold only `last_rows` real rows.
template <class Dot, bool kSigned, int kHalves, int MR, int G>
inline void register_tile(const InterleavedTile& t, const ActivationBlock* x, int64_t g0, float* y, int64_t ldy, int64_t last_rows) {
  __m256 acc[MR][G];
  for (int m = 0; m < MR; ++m)
    for (int g = 0; g < G; ++g) acc[m][g] = _mm256_setzero_ps();
  for (int64_t b = 0; b < t.blocks; ++b) {
    for (int h = 0; h < kHalves; ++h) {
      __m256i sums[MR][G];
      for (int m = 0; m < MR; ++m)
        for (int g = 0; g < G; ++g) sums[m][g] = _mm256_setzero_si256();
      const auto weights = [&](int c, int g) {
        return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(t.q + ((g0 + g) * t.blocks + b) * 256 + c * 32));
      };
      const auto activations = [&](int m, int c) {
        int32_t chunk;
        std::memcpy(&chunk, x[m * t.blocks + b].q + 4 * c, 4);
        return _mm256_set1_epi32(chunk);
      };
      for (int c = h * 8 / kHalves; c < (h + 1) * 8 / kHalves; c += kSigned ? 1 : 2) {
        if constexpr (kSigned) {  // |w| times x with w's sign
          __m256i w[G], magnitude[G];
          for (int g = 0; g < G; ++g) w[g] = weights(c, g), magnitude[g] = _mm256_sign_epi8(w[g], w[g]);
          for (int m = 0; m < MR; ++m) {
            const __m256i xb = activations(m, c);
            for (int g = 0; g < G; ++g) sums[m][g] = Dot::add_dot(sums[m][g], magnitude[g], _mm256_sign_epi8(xb, w[g]));
          }
        } else {  // two chunks at a time
          __m256i w0[G], w1[G];
          for (int g = 0; g < G; ++g) w0[g] = weights(c, g), w1[g] = weights(c + 1, g);
          for (int m = 0; m < MR; ++m) {
            const __m256i x0 = activations(m, c), x1 = activations(m, c + 1);
            for (int g = 0; g < G; ++g) sums[m][g] = Dot::add_dot_pair(sums[m][g], w0[g], x0, w1[g], x1);
          }
        }
      }
      for (int g = 0; g < G; ++g) {
        const __m256 ws = _mm256_loadu_ps(t.scales + (((g0 + g) * t.blocks + b) * kHalves + h) * kLanes);
        for (int m = 0; m < MR; ++m)
          acc[m][g] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sums[m][g]), _mm256_mul_ps(ws, _mm256_set1_ps(x[m * t.blocks + b].d)), acc[m][g]);
      }
    }
  }
  for (int m = 0; m < MR; ++m)
    for (int g = 0; g < G; ++g) {
      float* out = y + m * ldy + (g0 + g) * kLanes;
      if (g < G - 1 || last_rows == kLanes) {
        _mm256_storeu_ps(out, acc[m][g]);
      } else {
        alignas(32) float lanes[kLanes];
        _mm256_store_ps(lanes, acc[m][g]);
        std::copy(lanes, lanes + last_rows, out);
      }
    }
}

// `rows` activation rows (at most kActivationRows) times the tile's `tile_rows` weight rows.
template <class Dot, bool kSigned, int kHalves, int G>
inline void tile_rows_by(const InterleavedTile& t, int64_t tile_rows, const ActivationBlock* x, int64_t rows, float* y, int64_t ldy) {
  const int64_t groups = (tile_rows + kLanes - 1) / kLanes, last_rows = tile_rows - (groups - 1) * kLanes;
  const auto step = [&]<int MR>(int64_t g0, auto group_count) {
    constexpr int kG = decltype(group_count)::value;
    register_tile<Dot, kSigned, kHalves, MR, kG>(t, x, g0, y, ldy, g0 + kG == groups ? last_rows : kLanes);
  };
  const auto rows_step = [&](int64_t g0, auto group_count) {
    switch (rows) {
      case 4: step.template operator()<4>(g0, group_count); break;
      case 3: step.template operator()<3>(g0, group_count); break;
      case 2: step.template operator()<2>(g0, group_count); break;
      default: step.template operator()<1>(g0, group_count); break;
    }
  };
  int64_t g0 = 0;
  for (; g0 + G <= groups; g0 += G) rows_step(g0, std::integral_constant<int, G>{});
  for (; g0 < groups; ++g0) rows_step(g0, std::integral_constant<int, 1>{});
}

// Register tiles: 4 activation rows by G groups of 8 weight rows, as many as the registers hold
// (32 with AVX-512's VL: 3 groups, 2 for Q8_0's signs; 16 otherwise: 1).
template <class Dot, int kUnsignedGroups, int kSignedGroups>
struct TileKernels {
  template <bool kSigned, int kHalves>
  static void run(const InterleavedTile& t, int64_t n, const ActivationBlock* x, int64_t r, float* y, int64_t l) {
    tile_rows_by<Dot, kSigned, kHalves, kSigned ? kSignedGroups : kUnsignedGroups>(t, n, x, r, y, l);
  }
};

using TileRows = void (*)(const InterleavedTile&, int64_t, const ActivationBlock*, int64_t, float*, int64_t);

// One function per instruction set, compiled for its features alone (flattened: the dot inlines).
#define KILN_TILE_ROWS(name, Kernels, kSigned, kHalves, ...)                                                                  \
  [[__VA_ARGS__]] void name(const InterleavedTile& t, int64_t n, const ActivationBlock* x, int64_t r, float* y, int64_t l) { \
    Kernels::run<kSigned, kHalves>(t, n, x, r, y, l);                                                                        \
  }
using Avx2Tiles = TileKernels<Avx2Dot, 1, 1>;
using Avx512VnniTiles = TileKernels<Avx512VnniDot, 3, 2>;
using AvxVnniTiles = TileKernels<AvxVnniDot, 1, 1>;
KILN_TILE_ROWS(avx2_unsigned, Avx2Tiles, false, 1, gnu::flatten)
KILN_TILE_ROWS(avx2_unsigned_halves, Avx2Tiles, false, 2, gnu::flatten)
KILN_TILE_ROWS(avx2_signed, Avx2Tiles, true, 1, gnu::flatten)
KILN_TILE_ROWS(avx512_vnni_unsigned, Avx512VnniTiles, false, 1, gnu::flatten, gnu::target("avx512vnni,avx512vl"))
KILN_TILE_ROWS(avx512_vnni_unsigned_halves, Avx512VnniTiles, false, 2, gnu::flatten, gnu::target("avx512vnni,avx512vl"))
KILN_TILE_ROWS(avx512_vnni_signed, Avx512VnniTiles, true, 1, gnu::flatten, gnu::target("avx512vnni,avx512vl"))
KILN_TILE_ROWS(avx_vnni_unsigned, AvxVnniTiles, false, 1, gnu::flatten, gnu::target("avxvnni"))
KILN_TILE_ROWS(avx_vnni_unsigned_halves, AvxVnniTiles, false, 2, gnu::flatten, gnu::target("avxvnni"))
KILN_TILE_ROWS(avx_vnni_signed, AvxVnniTiles, true, 1, gnu::flatten, gnu::target("avxvnni"))
#undef KILN_TILE_ROWS

TileRows tile_rows_for(const char* instructions, const TileType& type) {
  const std::string name = instructions;
  const bool halves = type.halves == 2;
  if (name == "avx512vnni") return type.is_signed ? avx512_vnni_signed : halves ? avx512_vnni_unsigned_halves : avx512_vnni_unsigned;
  if (name == "avxvnni") return type.is_signed ? avx_vnni_signed : halves ? avx_vnni_unsigned_halves : avx_vnni_unsigned;
  return type.is_signed ? avx2_signed : halves ? avx2_unsigned_halves : avx2_unsigned;
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
  const TileRows multiply = tile_rows_for(instructions, *type);
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
    // The tile, its rows rounded up to whole groups of 8 (the padding rows are multiplied, never stored).
    const int64_t tile = (std::min(kTileRows, n_rows) + kLanes - 1) / kLanes * kLanes;
    std::vector<uint8_t> quants(static_cast<size_t>(tile * blocks * 32));
    std::vector<float> scales(static_cast<size_t>(tile * blocks * type->halves)), minimums(static_cast<size_t>(tile * std::max<int64_t>(groups, 1)));
    const InterleavedTile unpacked{quants.data(), scales.data(), blocks};
    for (int64_t n0 = 0; n0 < n_rows; n0 += kTileRows) {
      const int64_t rows = std::min(kTileRows, n_rows - n0);
#pragma omp parallel
      {
        std::vector<uint8_t> row_quants(static_cast<size_t>(blocks * 32));
        std::vector<float> row_scales(static_cast<size_t>(blocks * 2));
#pragma omp for schedule(static)
        for (int64_t r = 0; r < rows; ++r)
          interleave_row(*type, w + (n0 + r) * weight.row_bytes, r, blocks, row_quants.data(), row_scales.data(),
                         groups > 0 ? minimums.data() + r * groups : nullptr, quants.data(), scales.data());
      }
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
