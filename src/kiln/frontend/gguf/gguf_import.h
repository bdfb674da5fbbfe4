// The GGUF row of the format table: a GGUF decoder package imported as an ir::Model (its graph
// from decoder_graph.h, its hyperparameters and tokenizer kind in the model's metadata, under
// "gguf.*" keys). A file is mapped, not read (io::map_file_image): its block-quantized weights
// are the file's bytes, viewed in place (ir::Model::mapping).
#pragma once

#include <string>
#include <string_view>

#include "kiln/ir/graph.h"
#include "kiln/status.h"

namespace kiln::frontend::gguf {

// Rows of rotary angles the graph precomputes: the model's context length, at most this many.
constexpr int64_t kMaxRotaryPositions = 32768;

Result<ir::Model> import_gguf_file(const std::string& path);
Result<ir::Model> import_gguf_bytes(const std::string& bytes, const std::string& base_dir);

}  // namespace kiln::frontend::gguf
