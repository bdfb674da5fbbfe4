// ggml's tensor types (the type ids GGUF files store), one table: each type's name, how many values
// a block holds and how many bytes it takes; and the reference dequantization of a run of blocks
// to float (the layouts of ../shared/llm/README.md). The GGUF reader sizes and bounds-checks
// tensors by the table; a type whose layout it does not hold (the IQ and TQ families, MXFP4) is
// refused naming it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "kiln/status.h"

namespace kiln::ops {

struct GgmlType {
  uint32_t id = 0;            // ggml's type id, as the file stores it
  std::string_view name;      // "Q4_K"
  int64_t block_values = 1;   // values per block (32, 256 for the K types, 1 for plain types)
  int64_t block_bytes = 4;    // bytes per block
};

// The type with id `id`, when the table holds its layout.
std::optional<GgmlType> ggml_type(uint32_t id);
// A readable name for any id ggml has defined ("IQ2_XXS"), or "type <id>" for one it has not.
std::string ggml_type_name(uint32_t id);

// Q4_K and Q5_K pack eight 6-bit scales and eight 6-bit minimums in 12 bytes (`packed`): for
// sub-blocks 0-3 the low 6 bits of bytes 0-3 (scales) and 4-7 (minimums); for 4-7 the nibbles of
// bytes 8-11 (low: scale, high: minimum) with their top 2 bits in the top bits of bytes 0-3
// (scales) and 4-7 (minimums). Sub-block j's (scale, minimum). Inline: the cpu provider's products
// unpack them per sub-block.
inline std::pair<int, int> k_quant_scale_and_min(const uint8_t* packed, int j) {
  if (j < 4) return {packed[j] & 63, packed[j + 4] & 63};
  return {(packed[j + 4] & 0x0F) | (packed[j - 4] >> 6) << 4, (packed[j + 4] >> 4) | (packed[j] >> 6) << 4};
}

// The `count` values (a whole number of blocks, else InvalidArgument) of type `type` at `blocks`,
// as floats into `out`: every type of the table (F32, F16, BF16, F64; Q4_0, Q4_1, Q5_0, Q5_1, Q8_0,
// Q8_1; the K types Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, Q8_K; the integers I8, I16, I32, I64, rounded to
// the nearest float), each value the float ggml's reference dequantization gives, bit for bit.
// UnsupportedOperator naming the type for a type the table does not hold.
Status dequantize(const GgmlType& type, const char* blocks, int64_t count, float* out);

}  // namespace kiln::ops
