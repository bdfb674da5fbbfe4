// GGUF bytes for tests, written field by field (the layout of ../shared/llm/README.md), so that a
// test states exactly which bytes a reader is given: whole files, and files broken on purpose.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace kiln::testing {

class GgufWriter {
 public:
  GgufWriter& u8(uint8_t v) { return raw(&v, 1); }
  GgufWriter& u32(uint32_t v) { return raw(&v, 4); }
  GgufWriter& i32(int32_t v) { return raw(&v, 4); }
  GgufWriter& u64(uint64_t v) { return raw(&v, 8); }
  GgufWriter& f32(float v) { return raw(&v, 4); }
  GgufWriter& str(const std::string& s) { return u64(s.size()).raw(s.data(), s.size()); }
  GgufWriter& header(uint32_t version, uint64_t tensors, uint64_t keys) { return raw("GGUF", 4).u32(version).u64(tensors).u64(keys); }
  // One key with a value of a plain type (the value's bytes follow with the calls above).
  GgufWriter& key(const std::string& name, uint32_t type) { return str(name).u32(type); }
  GgufWriter& tensor(const std::string& name, const std::vector<uint64_t>& dims, uint32_t type, uint64_t offset) {
    str(name).u32(static_cast<uint32_t>(dims.size()));
    for (uint64_t d : dims) u64(d);
    return u32(type).u64(offset);
  }
  // Zeros up to the next multiple of `alignment`.
  GgufWriter& pad(size_t alignment) {
    while (bytes_.size() % alignment != 0) bytes_.push_back('\0');
    return *this;
  }
  GgufWriter& raw(const void* data, size_t n) {
    bytes_.append(static_cast<const char*>(data), n);
    return *this;
  }
  const std::string& bytes() const { return bytes_; }

 private:
  std::string bytes_;
};

}  // namespace kiln::testing
