// The GGUF row of the format table: a GGUF decoder package imported as an ir::Model (its graph
// from decoder_graph.h, its hyperparameters and tokenizer kind in the model's metadata, under
// "gguf.*" keys). A file is mapped, not read (io::map_file_image): its block-quantized weights
// are the file's bytes, viewed in place (ir::Model::mapping). The model's asset
// kPackageMetadataAsset is the package's metadata without its tensors (gguf_writer.h), which a
// compiled artifact carries so that kiln::Generator reads the hyperparameters and tokenizer back.
#pragma once

#include <string>
#include <string_view>

#include "kiln/ir/graph.h"
#include "kiln/status.h"

namespace kiln::frontend::gguf {

// Rows of rotary angles the graph precomputes: the model's context length, at most this many.
constexpr int64_t kMaxRotaryPositions = 32768;

// The name of the package-metadata asset (ir::Model::assets).
constexpr const char* kPackageMetadataAsset = "tokenizer.gguf";

Result<ir::Model> import_gguf_file(const std::string& path);
Result<ir::Model> import_gguf_bytes(const std::string& bytes, const std::string& base_dir);

}  // namespace kiln::frontend::gguf
