// Fuzz target: ONNX TensorProto / SequenceProto / OptionalProto files (frontend::read_value_pb, as
// the kiln tool reads test_data_set_N/input_K.pb). Input: one byte choosing the kind, a u32
// length, that many bytes of value.pb, the rest is data.bin beside it (for external data).
#include <cstdint>
#include <string>

#include "fuzz_support.h"
#include "kiln/frontend/onnx/tensor_pb.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  kiln::fuzz::FuzzInput input(data, size);
  const auto kind = static_cast<kiln::Value::Kind>(input.byte() % 3);
  const std::string path = kiln::fuzz::write_scratch_file("value.pb", input.record());
  kiln::fuzz::write_scratch_file("data.bin", input.rest());
  (void)kiln::frontend::read_value_pb(path, kind);
  return 0;
}
