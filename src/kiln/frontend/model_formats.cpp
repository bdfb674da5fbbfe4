// The format table (model_formats.h).
#include "kiln/frontend/model_formats.h"

#include "kiln/frontend/gguf/gguf_file.h"
#include "kiln/frontend/gguf/gguf_import.h"
#include "kiln/frontend/onnx/importer.h"
#include "kiln/io/file.h"

namespace kiln::frontend {

const std::vector<ModelFormat>& model_formats() {
  static const std::vector<ModelFormat> formats = {
      // llama.cpp's packages: "GGUF" (a big-endian file is recognised too, and refused by name).
      {"gguf", gguf::looks_like_gguf, gguf::import_gguf_file, gguf::import_gguf_bytes},
      // A serialized ModelProto begins with any of its fields' keys: no magic to check.
      {"onnx", [](std::string_view) { return true; }, import_onnx_file, import_onnx_bytes},
  };
  return formats;
}

const ModelFormat& format_of(std::string_view head) {
  head = head.substr(0, kMagicBytes);
  for (const ModelFormat& format : model_formats())
    if (format.recognises(head)) return format;
  return model_formats().back();
}

Result<ir::Model> import_model_file(const std::string& path) {
  KILN_ASSIGN_OR_RETURN(const std::string head, io::read_file_head(path, kMagicBytes));
  return format_of(head).import_file(path);
}

Result<ir::Model> import_model_bytes(const std::string& bytes, const std::string& base_dir) {
  return format_of(bytes).import_bytes(bytes, base_dir);
}

}  // namespace kiln::frontend
