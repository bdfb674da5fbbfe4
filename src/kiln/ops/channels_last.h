// Channels-last layout helpers: the axis permutations between channels-first (N, C, spatial...)
// and channels-last (N, spatial..., C) tensors, applied to dims, shapes and tensors. Shared by the
// channels-last ops (kiln.FusedConv with layout NHWC, kiln.ChannelsLast), the channels_last pass
// and the cpu provider.
#pragma once

#include <cstdint>
#include <vector>

#include "kiln/ir/shape.h"
#include "kiln/tensor.h"

namespace kiln::ops {

// perm for Transpose: channels-first -> channels-last, and back.
std::vector<int64_t> to_channels_last(size_t rank);
std::vector<int64_t> to_channels_first(size_t rank);

// out[i] = dims[perm[i]] (Transpose's rule).
template <class T>
std::vector<T> permuted(const std::vector<T>& dims, const std::vector<int64_t>& perm) {
  std::vector<T> out;
  out.reserve(perm.size());
  for (int64_t p : perm) out.push_back(dims[static_cast<size_t>(p)]);
  return out;
}

ir::Shape permuted(const ir::Shape& shape, const std::vector<int64_t>& perm);
Tensor permute_tensor(const Tensor& t, const std::vector<int64_t>& perm);

}  // namespace kiln::ops
