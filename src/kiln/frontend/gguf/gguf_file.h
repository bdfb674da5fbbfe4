// A GGUF file (llama.cpp's model package: metadata, tensor infos, then the tensor data) read from
// its bytes: versions 2 and 3, little-endian (a big-endian file is refused by name). Every count,
// length and offset is checked against the file before it is used, so a truncated or malicious
// file is an InvalidModel naming the key or tensor, and nothing is allocated beyond what the
// file's own size can hold. Tensor data is never copied: each tensor is a view into the bytes,
// which the caller keeps alive (a mapped file).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/ops/ggml_blocks.h"
#include "kiln/status.h"

namespace kiln::frontend::gguf {

// GGUF's metadata value types, as the file numbers them.
enum class ValueType : uint32_t {
  kU8 = 0, kI8 = 1, kU16 = 2, kI16 = 3, kU32 = 4, kI32 = 5, kF32 = 6, kBool = 7, kString = 8, kArray = 9,
  kU64 = 10, kI64 = 11, kF64 = 12,
};
std::string_view value_type_name(ValueType type);

struct MetadataValue {
  ValueType type = ValueType::kU8;
  uint64_t unsigned_value = 0;  // the unsigned types and bool
  int64_t signed_value = 0;     // the signed types
  double float_value = 0;       // F32, F64
  std::string string_value;
  ValueType element_type = ValueType::kU8;  // kArray: its elements' type
  std::vector<MetadataValue> elements;      // kArray

  bool is_integer() const;
  // An integer value as int64 (a u64 past int64's range gives -1).
  int64_t as_int() const;
  double as_float() const;  // an integer or float value
};

struct MetadataEntry {
  std::string key;
  MetadataValue value;
};

struct TensorInfo {
  std::string name;
  std::vector<int64_t> dims;  // innermost first, as the file stores them (dims[0] is contiguous)
  uint32_t type_id = 0;
  ops::GgmlType type;        // its layout
  uint64_t offset = 0;        // from the start of the data section
  uint64_t bytes = 0;         // the data's size, from the type and dims
  std::string_view data;      // a view into the file's bytes

  int64_t element_count() const;
};

struct GgufFile {
  uint32_t version = 0;
  uint64_t alignment = 32;    // general.alignment, else 32
  uint64_t data_offset = 0;   // where the data section starts in the file
  std::vector<MetadataEntry> metadata;  // in file order
  std::vector<TensorInfo> tensors;      // in file order

  const MetadataValue* find(std::string_view key) const;
  const TensorInfo* tensor(std::string_view name) const;
};

// Whether `head` (a file's first bytes) starts as a GGUF file does: "GGUF", in either byte order.
bool looks_like_gguf(std::string_view head);

// Reads `bytes` as a GGUF file; `what` names it in errors (the path).
Result<GgufFile> parse_gguf(std::string_view bytes, const std::string& what);

}  // namespace kiln::frontend::gguf
