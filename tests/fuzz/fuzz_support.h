// What the fuzz targets share: reading a fuzz input piece by piece, and a private scratch folder
// for the readers that take a path. Every piece reads zeros or nothing once the input runs out, so
// a target never rejects an input for being short.
#pragma once

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <string>
#include <string_view>

#include "kiln/io/temporary_folder.h"

namespace kiln::fuzz {

class FuzzInput {
 public:
  FuzzInput(const uint8_t* data, size_t size) : bytes_(reinterpret_cast<const char*>(data), size) {}

  uint8_t byte() { return bytes_.empty() ? 0 : static_cast<uint8_t>(take(1)[0]); }
  uint32_t u32() {
    uint32_t value = 0;
    for (int i = 0; i < 4; ++i) value |= uint32_t{byte()} << (8 * i);
    return value;
  }
  // Up to `n` bytes.
  std::string bytes(size_t n) { return std::string(take(n)); }
  // A little-endian u32 length, then up to that many bytes.
  std::string record() { return bytes(u32()); }
  std::string rest() { return bytes(bytes_.size()); }
  bool empty() const { return bytes_.empty(); }

 private:
  std::string_view take(size_t n) {
    const std::string_view taken = bytes_.substr(0, n);
    bytes_.remove_prefix(taken.size());
    return taken;
  }
  std::string_view bytes_;
};

// This process's scratch folder (removed at exit); targets overwrite their files in it per input.
inline const std::string& scratch_folder() {
  static const io::TemporaryFolder folder("kiln-fuzz");
  return folder.path();
}

// Writes `bytes` to `name` in the scratch folder and returns its path.
inline std::string write_scratch_file(const std::string& name, const std::string& bytes) {
  const std::string path = scratch_folder() + "/" + name;
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return path;
}

}  // namespace kiln::fuzz
