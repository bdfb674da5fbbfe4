// The ONNX frontend: .onnx file (plus external data) -> ir::Model, with the model's provenance
// (opset imports, producer, SHA-256 of the file) recorded for the evidence report.
#pragma once

#include <string>

#include "kiln/ir/graph.h"
#include "kiln/status.h"

namespace kiln::frontend {

// Imports the model at `path`; external data is resolved in the model's folder.
// Errors: NotFound (no such file), InvalidModel (unparseable, fails ONNX's checker, bad data,
// cycles, dangling inputs, external data outside the folder), UnsupportedOperator (unknown op or
// domain, non-tensor graph inputs/outputs, sparse tensors).
Result<ir::Model> import_onnx_file(const std::string& path);

// Imports a serialized ModelProto held in memory; external data is resolved in `base_dir`.
// Model::sha256 and file_bytes describe `bytes`; source_path stays empty.
Result<ir::Model> import_onnx_bytes(const std::string& bytes, const std::string& base_dir);

}  // namespace kiln::frontend
