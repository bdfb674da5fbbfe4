// Reading and writing tensor files: NumPy .npy and ONNX TensorProto .pb; and the values of model
// inputs and outputs (tensors, sequences, optionals) as files.
#pragma once

#include <string>

#include "kiln/status.h"
#include "kiln/tensor.h"
#include "kiln/value.h"

namespace kiln {

// Reads a .npy or .pb file (chosen by extension). InvalidArgument naming the file and the field
// at fault for malformed files, NotFound when missing.
Result<Tensor> read_tensor_file(const std::string& path);
// Writes `tensor` as .npy atomically: on failure no partial file is left at `path`.
Status write_npy_file(const std::string& path, const Tensor& tensor);

// Reads the value of a model input or output declared as `kind` with element type
// `declared_dtype`: a .pb file holds a TensorProto, SequenceProto or OptionalProto as `kind` says
// (the format does not tell them apart); a .npy file holds a tensor (InvalidArgument for a
// sequence or optional). NumPy has no bfloat16, and ONNX's test data stores bfloat16 as UINT16
// tensors of raw bits: where `declared_dtype` is bfloat16, a uint16 tensor (a .npy, a UINT16 .pb,
// or an element of a sequence or optional) is taken as bfloat16 bits. An empty sequence, whose
// file carries no element type, takes `declared_dtype`. Any other element type is returned as
// read, for the session to refuse by name.
Result<Value> read_value_file(const std::string& path, Value::Kind kind, DType declared_dtype);

// Writes `value` atomically. A .pb path: a TensorProto, SequenceProto or OptionalProto (by the
// value's kind), which read_value_file reads back. A .npy path: a tensor, bfloat16 as uint16 bits
// (what read_value_file takes back as bfloat16); InvalidArgument for a sequence or optional.
Status write_value_file(const std::string& path, const Value& value);

}  // namespace kiln
