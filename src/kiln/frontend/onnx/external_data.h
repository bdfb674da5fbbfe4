// ONNX external data: tensors whose bytes live in a file beside the model (data_location EXTERNAL,
// keys location/offset/length). Locations are confined to the model's folder.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <string>

#include "kiln/status.h"
#include "kiln/tensor.h"

namespace kiln::frontend {

// The real path of `location` inside `base_dir`. InvalidModel naming the tensor and the path when
// the location is empty, absolute, has a '..' component, resolves (through symlinks) outside
// `base_dir`, or is not a regular file.
Result<std::string> resolve_external_location(const std::string& base_dir, const std::string& location,
                                              const std::string& tensor_name);

// One tensor's external data, opened and checked against its file before any memory is allocated
// for it: a model declaring a huge tensor in a small file is refused, not allocated.
class ExternalData {
 public:
  // Opens the proto's external file for `bytes` bytes of data (the tensor's stored size). Offsets
  // and lengths are 64-bit; InvalidModel naming the tensor when the location is refused, the
  // declared length is not `bytes`, the file is shorter than offset + bytes, or the tensor holds
  // strings.
  static Result<ExternalData> open(const onnx::TensorProto& proto, const std::string& base_dir, uint64_t bytes);

  ExternalData(ExternalData&& other) noexcept;
  ExternalData& operator=(ExternalData&&) = delete;
  ~ExternalData();

  // Reads the checked bytes into `out` (of exactly that many bytes). InvalidModel when the file
  // shrank since it was opened.
  Status read_into(Tensor& out) const;

 private:
  ExternalData() = default;

  int fd_ = -1;
  uint64_t offset_ = 0;
  uint64_t bytes_ = 0;
  std::string what_;
};

}  // namespace kiln::frontend
