// The model formats Kiln imports: one table, a row per format, each chosen by a file's first bytes
// (its magic), never by its name. ONNX (a protobuf ModelProto, which has no magic) is the last
// row: bytes no other row claims are read as ONNX, whose importer then says what is wrong with
// them. Adding a format is a folder under frontend/ and a row in model_formats().
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "kiln/ir/graph.h"
#include "kiln/status.h"

namespace kiln::frontend {

// How many first bytes of a file the rows look at.
constexpr size_t kMagicBytes = 8;

struct ModelFormat {
  std::string_view name;  // "onnx"
  // Whether a file that starts with `head` (its first kMagicBytes bytes, fewer when it is
  // shorter) is in this format.
  bool (*recognises)(std::string_view head);
  // The model at `path`; the files it refers to (external data) are resolved beside it.
  Result<ir::Model> (*import_file)(const std::string& path);
  // A model held in memory; the files it refers to are resolved in `base_dir`.
  Result<ir::Model> (*import_bytes)(const std::string& bytes, const std::string& base_dir);
};

// Every format, the ones recognised by their magic first.
const std::vector<ModelFormat>& model_formats();
// The row whose format a file starting with `head` is in.
const ModelFormat& format_of(std::string_view head);

// Imports the model at `path` (NotFound when there is none) or in `bytes` with its format's row.
Result<ir::Model> import_model_file(const std::string& path);
Result<ir::Model> import_model_bytes(const std::string& bytes, const std::string& base_dir);

}  // namespace kiln::frontend
