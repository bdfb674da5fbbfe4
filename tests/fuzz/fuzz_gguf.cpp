// Fuzz target: GGUF bytes -> the reader (frontend::gguf::parse_gguf); a file it accepts has every
// tensor's view read end to end (the views must lie inside the input).
#include <cstdint>
#include <string_view>

#include "kiln/frontend/gguf/gguf_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  kiln::Result<kiln::frontend::gguf::GgufFile> file = kiln::frontend::gguf::parse_gguf(bytes, "fuzz.gguf");
  if (!file.is_ok()) return 0;
  unsigned sum = 0;
  for (const auto& t : file.value().tensors)
    for (char c : t.data) sum += static_cast<unsigned char>(c);
  return static_cast<int>(sum & 0u);
}
