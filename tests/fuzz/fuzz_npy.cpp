// Fuzz target: .npy bytes -> a tensor (io::parse_npy); a tensor it accepts is written back.
#include <cstdint>
#include <string>

#include "kiln/io/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  kiln::Result<kiln::Tensor> tensor = kiln::io::parse_npy(bytes, "fuzz.npy");
  if (tensor.is_ok()) (void)kiln::io::serialize_npy(tensor.value());
  return 0;
}
