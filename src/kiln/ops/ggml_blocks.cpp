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
      default: return unsupported_operator("dequantization of " + std::string(type.name) + " is not implemented yet");
    }
  }
  return Status::ok();
}

}  // namespace kiln::ops
