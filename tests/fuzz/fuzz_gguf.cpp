// Fuzz target: GGUF bytes -> the reader (frontend::gguf::parse_gguf); a file it accepts has every
// tensor's view read end to end (the views must lie inside the input), then goes on as a package
// does: its hyperparameters, its tokenizer (encoding and decoding a short text) and the decoder's
// graph (every weight dequantized), each refusing what it cannot use.
#include <cstdint>
#include <string_view>

#include "kiln/frontend/gguf/decoder_graph.h"
#include "kiln/frontend/gguf/gguf_file.h"
#include "kiln/frontend/gguf/llm_hyperparameters.h"
#include "kiln/frontend/gguf/tokenizer.h"

namespace gguf = kiln::frontend::gguf;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  kiln::Result<gguf::GgufFile> file = gguf::parse_gguf(bytes, "fuzz.gguf");
  if (!file.is_ok()) return 0;
  unsigned sum = 0;
  for (const auto& t : file.value().tensors)
    for (char c : t.data) sum += static_cast<unsigned char>(c);
  if (auto tokenizer = gguf::make_tokenizer(file.value()); tokenizer.is_ok()) {
    if (auto ids = tokenizer.value()->encode("Once upon a <s> time \xF0\x9F\x94\xA5", true, true); ids.is_ok())
      (void)tokenizer.value()->decode(ids.value());
  }
  if (auto hp = gguf::read_hyperparameters(file.value()); hp.is_ok()) (void)gguf::build_decoder_graph(file.value(), nullptr, hp.value(), 16);
  return static_cast<int>(sum & 0u);
}
