// Reading and writing tensor files: NumPy .npy and ONNX TensorProto .pb.
#pragma once

#include <string>

#include "kiln/status.h"
#include "kiln/tensor.h"

namespace kiln {

// Reads a .npy or .pb file (chosen by extension). InvalidArgument naming the file and the field
// at fault for malformed files, NotFound when missing.
Result<Tensor> read_tensor_file(const std::string& path);
// Writes `tensor` as .npy atomically: on failure no partial file is left at `path`.
Status write_npy_file(const std::string& path, const Tensor& tensor);

}  // namespace kiln
