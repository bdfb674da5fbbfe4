// ONNX TensorProto -> kiln::Tensor, for every storage form (raw_data, the typed repeated fields,
// external data). The one conversion used by the model importer and by the .pb tensor reader; and
// back, for the .pb tensor writer.
#pragma once

#include <onnx/onnx_pb.h>

#include <string>

#include "kiln/status.h"
#include "kiln/tensor.h"

namespace kiln::frontend {

// An owning tensor with the proto's element type, dims and data. External data is resolved
// against `base_dir`. InvalidModel naming the tensor when the type is unknown, a dim is negative,
// the data size disagrees with the dims, or the external data is unusable.
Result<Tensor> tensor_from_proto(const onnx::TensorProto& proto, const std::string& base_dir);

// The TensorProto of `tensor`: its element type, dims and data in raw_data (4-bit integers packed
// two per byte, the first in the low nibble), strings in string_data. `tensor` must be defined.
onnx::TensorProto tensor_to_proto(const Tensor& tensor);

}  // namespace kiln::frontend
