// Writing GGUF metadata back as a file: a package's metadata without its tensors (a "vocab-only"
// GGUF, as llama.cpp's own tokenizer test files are), which parse_gguf reads back entry for entry.
// A compiled artifact carries a package's metadata this way (hyperparameters and tokenizer), and
// the tokenizer's hash is taken over its entries so written.
#pragma once

#include <string>
#include <vector>

#include "kiln/frontend/gguf/gguf_file.h"

namespace kiln::frontend::gguf {

// A GGUF version 3 file (little-endian) holding `entries` in order and no tensors.
std::string write_metadata_gguf(const std::vector<MetadataEntry>& entries);

}  // namespace kiln::frontend::gguf
