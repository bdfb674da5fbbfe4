// GGUF metadata written back as a file (gguf_writer.h): the layout gguf_file.cpp reads.
#include "kiln/frontend/gguf/gguf_writer.h"

#include <cstring>

namespace kiln::frontend::gguf {
namespace {

template <class T>
void put(std::string& out, T value) {
  char bytes[sizeof(T)];
  std::memcpy(bytes, &value, sizeof(T));
  out.append(bytes, sizeof(T));
}

void put_string(std::string& out, const std::string& text) {
  put<uint64_t>(out, text.size());
  out += text;
}

// The value's bytes as the file stores them (its type written by the caller).
void put_value(std::string& out, const MetadataValue& v) {
  switch (v.type) {
    case ValueType::kU8: put<uint8_t>(out, static_cast<uint8_t>(v.unsigned_value)); break;
    case ValueType::kI8: put<int8_t>(out, static_cast<int8_t>(v.signed_value)); break;
    case ValueType::kU16: put<uint16_t>(out, static_cast<uint16_t>(v.unsigned_value)); break;
    case ValueType::kI16: put<int16_t>(out, static_cast<int16_t>(v.signed_value)); break;
    case ValueType::kU32: put<uint32_t>(out, static_cast<uint32_t>(v.unsigned_value)); break;
    case ValueType::kI32: put<int32_t>(out, static_cast<int32_t>(v.signed_value)); break;
    case ValueType::kU64: put<uint64_t>(out, v.unsigned_value); break;
    case ValueType::kI64: put<int64_t>(out, v.signed_value); break;
    case ValueType::kF32: put<float>(out, static_cast<float>(v.float_value)); break;
    case ValueType::kF64: put<double>(out, v.float_value); break;
    case ValueType::kBool: put<uint8_t>(out, v.unsigned_value ? 1 : 0); break;
    case ValueType::kString: put_string(out, v.string_value); break;
    case ValueType::kArray:
      put<uint32_t>(out, static_cast<uint32_t>(v.element_type));
      put<uint64_t>(out, v.elements.size());
      for (const MetadataValue& e : v.elements) put_value(out, e);
      break;
  }
}

}  // namespace

std::string write_metadata_gguf(const std::vector<MetadataEntry>& entries) {
  std::string out = "GGUF";
  put<uint32_t>(out, 3);
  put<uint64_t>(out, 0);  // tensors
  put<uint64_t>(out, entries.size());
  for (const MetadataEntry& e : entries) {
    put_string(out, e.key);
    put<uint32_t>(out, static_cast<uint32_t>(e.value.type));
    put_value(out, e.value);
  }
  return out;
}

}  // namespace kiln::frontend::gguf
