// The tensor types of GGUF files (ggml's type ids), one table: each type's name, how many values a
// block holds and how many bytes it takes. The reader sizes and bounds-checks tensors by it; a type
// whose layout the table does not hold (the IQ and TQ families, MXFP4) is refused naming it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace kiln::frontend::gguf {

struct TensorTypeInfo {
  uint32_t id = 0;            // ggml's type id, as the file stores it
  std::string_view name;      // "Q4_K"
  int64_t block_values = 1;   // values per block (32, 256 for the K types, 1 for plain types)
  int64_t block_bytes = 4;    // bytes per block
};

// The type with id `id`, when the table holds its layout.
std::optional<TensorTypeInfo> tensor_type(uint32_t id);
// A readable name for any id ggml has defined ("IQ2_XXS"), or "type <id>" for one it has not.
std::string tensor_type_name(uint32_t id);

}  // namespace kiln::frontend::gguf
