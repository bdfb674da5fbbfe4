// Fuzz target: an ONNX model file whose initializers live in an external data file beside it
// (frontend::import_onnx_file). Input: a u32 length, that many bytes of model.onnx, the rest is
// weights.bin in the same private folder.
#include <cstdint>
#include <string>

#include "fuzz_support.h"
#include "kiln/frontend/onnx/importer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  kiln::fuzz::FuzzInput input(data, size);
  const std::string model_path = kiln::fuzz::write_scratch_file("model.onnx", input.record());
  kiln::fuzz::write_scratch_file("weights.bin", input.rest());
  (void)kiln::frontend::import_onnx_file(model_path);
  return 0;
}
