// The public tensor-file API (include/kiln/tensor_io.h): picks the format by file extension.
#include "kiln/tensor_io.h"

#include "kiln/io/npy.h"
#include "kiln/io/tensor_pb.h"

namespace kiln {

namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

Result<Tensor> read_tensor_file(const std::string& path) {
  if (ends_with(path, ".npy")) return io::read_npy(path);
  if (ends_with(path, ".pb")) return io::read_tensor_pb(path);
  return invalid_argument("'" + path + "': tensor files must end in .npy or .pb");
}

Status write_npy_file(const std::string& path, const Tensor& tensor) { return io::write_npy(path, tensor); }

}  // namespace kiln
