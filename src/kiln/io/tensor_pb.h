// ONNX TensorProto files (.pb), as in ONNX's backend test data (test_data_set_N/input_K.pb).
#pragma once

#include <string>

#include "kiln/status.h"
#include "kiln/tensor.h"
#include "kiln/value.h"

namespace kiln::io {

// Reads one serialized TensorProto. NotFound when missing; InvalidArgument naming the file when it
// is not a TensorProto or its data disagrees with its dims. External data is resolved in the
// file's folder.
Result<Tensor> read_tensor_pb(const std::string& path);
// Reads a TensorProto, SequenceProto (of tensors) or OptionalProto file, as `kind` says (the
// file format does not tell them apart).
Result<Value> read_value_pb(const std::string& path, Value::Kind kind);

}  // namespace kiln::io
