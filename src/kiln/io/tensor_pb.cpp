// .pb tensor reading through the frontend's single TensorProto conversion.
#include "kiln/io/tensor_pb.h"

#include <onnx/onnx_pb.h>

#include <climits>

#include "kiln/frontend/onnx/tensor_proto.h"
#include "kiln/io/file.h"

namespace kiln::io {

Result<Tensor> read_tensor_pb(const std::string& path) {
  KILN_ASSIGN_OR_RETURN(std::string bytes, read_file(path));
  onnx::TensorProto proto;
  if (bytes.size() > static_cast<size_t>(INT_MAX) || !proto.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
    return invalid_argument(path + ": not a serialized ONNX TensorProto");
  Result<Tensor> tensor = frontend::tensor_from_proto(proto, parent_folder(path));
  if (!tensor.is_ok()) return invalid_argument(path + ": " + tensor.status().message());
  return tensor;
}

}  // namespace kiln::io
