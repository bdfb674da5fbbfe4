// Fuzz target: serialized ONNX ModelProto bytes -> an ir::Model (frontend::import_onnx_bytes:
// parsing, ONNX's checker, graph building, initializers).
#include <cstdint>
#include <string>

#include "fuzz_support.h"
#include "kiln/frontend/onnx/importer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  (void)kiln::frontend::import_onnx_bytes(bytes, kiln::fuzz::scratch_folder());
  return 0;
}
