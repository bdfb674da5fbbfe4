// ggml's type table and reference dequantization (see ggml_blocks.h).
#include "kiln/ops/ggml_blocks.h"

#include <array>
#include <cstring>
#include <utility>

#include "kiln/ir/float16.h"

namespace kiln::ops {
namespace {

constexpr std::array<GgmlType, 20> kTypes = {{
    {0, "F32", 1, 4},
    {1, "F16", 1, 2},
    {2, "Q4_0", 32, 18},
    {3, "Q4_1", 32, 20},
    {6, "Q5_0", 32, 22},
    {7, "Q5_1", 32, 24},
    {8, "Q8_0", 32, 34},
    {9, "Q8_1", 32, 36},
    {10, "Q2_K", 256, 84},
    {11, "Q3_K", 256, 110},
    {12, "Q4_K", 256, 144},
    {13, "Q5_K", 256, 176},
    {14, "Q6_K", 256, 210},
    {15, "Q8_K", 256, 292},
    {24, "I8", 1, 1},
    {25, "I16", 1, 2},
    {26, "I32", 1, 4},
    {27, "I64", 1, 8},
    {28, "F64", 1, 8},
    {30, "BF16", 1, 2},
}};

// Ids ggml defines whose layouts the table does not hold.
constexpr std::array<std::pair<uint32_t, std::string_view>, 14> kOtherNames = {{
    {4, "Q4_2"}, {5, "Q4_3"}, {16, "IQ2_XXS"}, {17, "IQ2_XS"}, {18, "IQ3_XXS"}, {19, "IQ1_S"}, {20, "IQ4_NL"}, {21, "IQ3_S"},
    {22, "IQ2_S"}, {23, "IQ4_XS"}, {29, "IQ1_M"}, {34, "TQ1_0"}, {35, "TQ2_0"}, {39, "MXFP4"},
}};

float half_at(const char* p) {
  Float16 h;
  std::memcpy(&h.bits, p, 2);
  return ir::to_float(h);
}

// Blocks of 32 values: 4-bit (Q4_0: (q - 8) d; Q4_1: q d + m) and 5-bit (Q5_0: (q - 16) d; Q5_1:
// q d + m) with the fifth bits in a little-endian u32, element j's at bit j; low nibbles are
// elements 0-15, high nibbles 16-31.
void dequantize_nibbles(const char* block, float* y, bool with_min, bool fifth_bit) {
  const float d = half_at(block), m = with_min ? half_at(block + 2) : 0.0f;
  const char* p = block + (with_min ? 4 : 2);
  uint32_t high = 0;
  if (fifth_bit) {
    std::memcpy(&high, p, 4);
    p += 4;
  }
  const int offset = with_min ? 0 : (fifth_bit ? 16 : 8);
  for (int j = 0; j < 16; ++j) {
    const auto byte = static_cast<uint8_t>(p[j]);
    const int lo = (byte & 0x0F) | (fifth_bit ? static_cast<int>((high >> j) & 1u) << 4 : 0);
    const int hi = (byte >> 4) | (fifth_bit ? static_cast<int>((high >> (j + 16)) & 1u) << 4 : 0);
    y[j] = static_cast<float>(lo - offset) * d + m;
    y[j + 16] = static_cast<float>(hi - offset) * d + m;
  }
}

// The K types' super-blocks of 256 values, in ggml's order of operations: the super-block's d (or
// dmin) times a sub-block's integer scale (or minimum), that times the quant, the minimum's product
// subtracted last. Every product is exact in float (a half's 11 significant bits times integers of
// at most 7 and 5 bits), so only the subtraction rounds, once, whether or not the compiler fuses it
// with the multiplication: the floats are ggml's reference ones bit for bit.

// The 2-bit quants of Q2_K and Q3_K: 64 bytes, each half of the block (128 values) on 32 of them;
// byte l of a half holds, at bits 2k and 2k+1, the half's element 32k + l.
int two_bit_quant(const uint8_t* qs, int e) {
  const int half = e / 128, k = (e % 128) / 32;
  return (qs[32 * half + e % 32] >> (2 * k)) & 3;
}

// Q2_K (84 bytes): 16 scale bytes (sub-block i of 16 values: low nibble its scale, high nibble its
// minimum), 64 bytes of 2-bit quants, d, dmin. Value: (d scale) q - (dmin minimum).
void dequantize_q2_k(const char* block, float* y) {
  const auto* scales = reinterpret_cast<const uint8_t*>(block);
  const auto* qs = scales + 16;
  const float d = half_at(block + 80), dmin = half_at(block + 82);
  for (int e = 0; e < 256; ++e) {
    const uint8_t packed = scales[e / 16];
    const float scale = d * static_cast<float>(packed & 0x0F), minimum = dmin * static_cast<float>(packed >> 4);
    y[e] = scale * static_cast<float>(two_bit_quant(qs, e)) - minimum;
  }
}

// Q3_K (110 bytes): 32 bytes of high bits (element e's at bit e / 32 of byte e % 32), 64 bytes of
// 2-bit quants, 12 bytes of 16 signed 6-bit scales, d. Scale i's low 4 bits are nibble i / 8 of
// byte i % 8, its high 2 bits bits 2 (i / 4) of byte 8 + i % 4; it counts from -32. The quant is
// its 2 low bits, less 4 where its high bit is clear. Value: (d (scale - 32)) (low2 - (high ? 0 : 4)).
void dequantize_q3_k(const char* block, float* y) {
  const auto* high = reinterpret_cast<const uint8_t*>(block);
  const auto* qs = high + 32;
  const auto* packed = qs + 64;
  const float d = half_at(block + 108);
  for (int e = 0; e < 256; ++e) {
    const int i = e / 16;
    const int scale = ((packed[i % 8] >> (4 * (i / 8))) & 0x0F) | ((packed[8 + i % 4] >> (2 * (i / 4))) & 3) << 4;
    const int q = two_bit_quant(qs, e) - (((high[e % 32] >> (e / 32)) & 1) ? 0 : 4);
    y[e] = d * static_cast<float>(scale - 32) * static_cast<float>(q);
  }
}

// Q4_K (144 bytes): d, dmin, 12 bytes of scales and minimums, 128 bytes of nibbles; Q5_K (176
// bytes) puts 32 bytes of fifth bits before the nibbles. Each 64 values take 32 bytes, low nibbles
// first, then high; sub-block j is values 32j to 32j + 31, and element e's fifth bit is bit e / 32
// of byte e % 32. Value: (d scale) q - (dmin minimum).
void dequantize_k_nibbles(const char* block, float* y, bool fifth_bit) {
  const float d = half_at(block), dmin = half_at(block + 2);
  const auto* packed = reinterpret_cast<const uint8_t*>(block + 4);
  const uint8_t* high = packed + 12;
  const uint8_t* qs = high + (fifth_bit ? 32 : 0);
  for (int j = 0; j < 8; ++j) {
    const auto [scale_bits, min_bits] = k_quant_scale_and_min(packed, j);
    const float scale = d * static_cast<float>(scale_bits), minimum = dmin * static_cast<float>(min_bits);
    for (int l = 0; l < 32; ++l) {
      const int e = 32 * j + l;
      int q = (qs[32 * (j / 2) + l] >> (4 * (j % 2))) & 0x0F;
      if (fifth_bit) q |= ((high[l] >> j) & 1) << 4;
      y[e] = scale * static_cast<float>(q) - minimum;
    }
  }
}

// Q6_K (210 bytes): 128 bytes of low nibbles, 64 bytes of high 2-bit pairs, 16 int8 scales (one per
// 16 values), d. Each half (128 values) has 64 nibble bytes and 32 pair bytes: its element 32k + l
// takes nibble k / 2 of byte l + 32 (k % 2) and bits 2k, 2k + 1 of pair byte l; the 6-bit quant
// counts from -32. Value: (d scale) (q - 32).
void dequantize_q6_k(const char* block, float* y) {
  const auto* low = reinterpret_cast<const uint8_t*>(block);
  const uint8_t* pairs = low + 128;
  const auto* scales = reinterpret_cast<const int8_t*>(block + 192);
  const float d = half_at(block + 208);
  for (int e = 0; e < 256; ++e) {
    const int half = e / 128, k = (e % 128) / 32, l = e % 32;
    const int nibble = (low[64 * half + 32 * (k % 2) + l] >> (4 * (k / 2))) & 0x0F;
    const int q = (nibble | ((pairs[32 * half + l] >> (2 * k)) & 3) << 4) - 32;
    y[e] = d * static_cast<float>(scales[e / 16]) * static_cast<float>(q);
  }
}

// Q8_K (292 bytes): a float d, 256 int8 quants, 16 int16 sums of 16 quants each (for dot products;
// not needed here). Value: d q.
void dequantize_q8_k(const char* block, float* y) {
  float d;
  std::memcpy(&d, block, 4);
  for (int e = 0; e < 256; ++e) y[e] = d * static_cast<float>(static_cast<int8_t>(block[4 + e]));
}

// The integer types: one little-endian value each, converted to the nearest float (as ggml's
// get_f32 reads them).
template <typename Int>
float integer_at(const char* p) {
  Int v;
  std::memcpy(&v, p, sizeof v);
  return static_cast<float>(v);
}

}  // namespace

std::optional<GgmlType> ggml_type(uint32_t id) {
  for (const GgmlType& t : kTypes)
    if (t.id == id) return t;
  return std::nullopt;
}

std::string ggml_type_name(uint32_t id) {
  for (const GgmlType& t : kTypes)
    if (t.id == id) return std::string(t.name);
  for (const auto& [other, name] : kOtherNames)
    if (other == id) return std::string(name);
  return "type " + std::to_string(id);
}

Status dequantize(const GgmlType& type, const char* blocks, int64_t count, float* out) {
  if (count % type.block_values != 0)
    return invalid_argument(std::to_string(count) + " values are not whole " + std::string(type.name) + " blocks");
  const int64_t n_blocks = count / type.block_values;
  for (int64_t b = 0; b < n_blocks; ++b) {
    const char* block = blocks + b * type.block_bytes;
    float* y = out + b * type.block_values;
    switch (type.id) {
      case 0: std::memcpy(y, block, 4); break;
      case 1: *y = half_at(block); break;
      case 28: {
        double v;
        std::memcpy(&v, block, 8);
        *y = static_cast<float>(v);
        break;
      }
      case 30: {
        BFloat16 h;
        std::memcpy(&h.bits, block, 2);
        *y = ir::to_float(h);
        break;
      }
      case 2: dequantize_nibbles(block, y, false, false); break;  // Q4_0
      case 3: dequantize_nibbles(block, y, true, false); break;   // Q4_1
      case 6: dequantize_nibbles(block, y, false, true); break;   // Q5_0
      case 7: dequantize_nibbles(block, y, true, true); break;    // Q5_1
      case 8:                                                      // Q8_0: d, 32 int8
      case 9: {                                                    // Q8_1: d, s (d times the sum), 32 int8
        const float d = half_at(block);
        const char* q = block + (type.id == 8 ? 2 : 4);
        for (int j = 0; j < 32; ++j) y[j] = static_cast<float>(static_cast<int8_t>(q[j])) * d;
        break;
      }
      case 10: dequantize_q2_k(block, y); break;
      case 11: dequantize_q3_k(block, y); break;
      case 12: dequantize_k_nibbles(block, y, false); break;  // Q4_K
      case 13: dequantize_k_nibbles(block, y, true); break;   // Q5_K
      case 14: dequantize_q6_k(block, y); break;
      case 15: dequantize_q8_k(block, y); break;
      case 24: *y = integer_at<int8_t>(block); break;
      case 25: *y = integer_at<int16_t>(block); break;
      case 26: *y = integer_at<int32_t>(block); break;
      case 27: *y = integer_at<int64_t>(block); break;
      default: return unsupported_operator("no dequantization of " + std::string(type.name) + " (its layout is not in the table)");
    }
  }
  return Status::ok();
}

}  // namespace kiln::ops
