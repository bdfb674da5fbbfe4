// ONNX TensorProto -> kiln::Tensor, for every storage form (raw_data, the typed repeated fields,
// external data). The one conversion used by the model importer and by the .pb tensor reader.
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

}  // namespace kiln::frontend
