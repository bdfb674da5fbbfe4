// ONNX TensorProto, SequenceProto and OptionalProto files (.pb), as in ONNX's backend test data
// (test_data_set_N/input_K.pb).
#pragma once

#include <string>

#include "kiln/status.h"
#include "kiln/tensor.h"
#include "kiln/value.h"

namespace kiln::frontend {

// Reads one serialized TensorProto. NotFound when missing; InvalidArgument naming the file when it
// is not a TensorProto or its data disagrees with its dims. External data is resolved in the
// file's folder.
Result<Tensor> read_tensor_pb(const std::string& path);
// Reads a TensorProto, SequenceProto (of tensors) or OptionalProto file, as `kind` says (the
// file format does not tell them apart).
Result<Value> read_value_pb(const std::string& path, Value::Kind kind);
// Writes `value` to `path` atomically as the message its kind calls for: a TensorProto, a
// SequenceProto of tensors, or an OptionalProto (elem_type UNDEFINED when empty), as
// read_value_pb reads them back. InvalidArgument naming the file when it cannot be written.
Status write_value_pb(const std::string& path, const Value& value);

}  // namespace kiln::frontend
