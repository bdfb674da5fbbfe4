// ONNX external data: tensors whose bytes live in a file beside the model (data_location EXTERNAL,
// keys location/offset/length). Locations are confined to the model's folder.
#pragma once

#include <onnx/onnx_pb.h>

#include <string>

#include "kiln/status.h"
#include "kiln/tensor.h"

namespace kiln::frontend {

// The real path of `location` inside `base_dir`. InvalidModel naming the tensor and the path when
// the location is empty, absolute, has a '..' component, resolves (through symlinks) outside
// `base_dir`, or is not a regular file.
Result<std::string> resolve_external_location(const std::string& base_dir, const std::string& location,
                                              const std::string& tensor_name);

// Fills `out` (allocated with the proto's element type and dims) from the proto's external file.
// Offsets and lengths are 64-bit; InvalidModel when the file is shorter than offset + length or
// the length disagrees with the tensor's size.
Status read_external_data(const onnx::TensorProto& proto, const std::string& base_dir, Tensor& out);

}  // namespace kiln::frontend
