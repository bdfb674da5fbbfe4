// Channels-last layout helpers.
#include "kiln/ops/channels_last.h"

#include "kiln/ops/data_movement.h"

namespace kiln::ops {

std::vector<int64_t> to_channels_last(size_t rank) {
  std::vector<int64_t> perm{0};
  for (size_t d = 2; d < rank; ++d) perm.push_back(static_cast<int64_t>(d));
  perm.push_back(1);
  return perm;
}

std::vector<int64_t> to_channels_first(size_t rank) {
  std::vector<int64_t> perm{0, static_cast<int64_t>(rank) - 1};
  for (size_t d = 1; d + 1 < rank; ++d) perm.push_back(static_cast<int64_t>(d));
  return perm;
}

ir::Shape permuted(const ir::Shape& shape, const std::vector<int64_t>& perm) { return ir::Shape(permuted(shape.dims(), perm)); }

Tensor permute_tensor(const Tensor& t, const std::vector<int64_t>& perm) {
  Tensor out = Tensor::allocate(t.dtype(), permuted(t.shape(), perm));
  gather_by_offsets(t, out, permuted_offsets(t.shape(), perm));
  return out;
}

}  // namespace kiln::ops
