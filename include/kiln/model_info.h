// kiln::inspect_model: what a model file declares, without compiling it (what `kiln inspect` shows).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "kiln/session.h"
#include "kiln/status.h"

namespace kiln {

struct ModelInfo {
  std::string path;
  std::string sha256;
  int64_t file_bytes = 0;
  int64_t ir_version = 0;
  std::string producer;
  std::map<std::string, int64_t> opset_imports;  // "ai.onnx" for the default domain
  std::map<std::string, std::string> metadata;
  std::vector<TensorInfo> inputs;
  std::vector<TensorInfo> outputs;
  std::map<std::string, int64_t> op_histogram;  // op type (domain-qualified outside ai.onnx) -> nodes
  int64_t nodes = 0;
  int64_t parameter_tensors = 0;
  int64_t parameters = 0;  // elements
  int64_t parameter_bytes = 0;
  std::string ir_text;     // the imported IR, when asked for
};

// Imports `path` (errors as Session::load's import stage) and summarises it.
Result<ModelInfo> inspect_model(const std::string& path, bool with_ir_text = false);

}  // namespace kiln
