// The smallest-rank view of an element-wise op: adjacent dims along which every operand is alike
// (each either full or broadcast over both) merge into one. oneDNN's binary kernels run a
// broadcast operand with vector code only per tensor or per channel (dim 1); [2, 3, 17] + [17]
// viewed as [6, 17] + [1, 17] is per channel, where [2, 3, 17] + [1, 1, 17] ran oneDNN's reference
// code.
#pragma once

#include <cstdint>
#include <vector>

namespace kiln::providers::cpu {

struct BroadcastView {
  std::vector<int64_t> output;
  std::vector<std::vector<int64_t>> operands;  // each of the output view's rank
};

// `operands` are numpy-broadcastable to `output` (ranks may be lower).
BroadcastView collapse_broadcast(const std::vector<int64_t>& output, const std::vector<std::vector<int64_t>>& operands);

}  // namespace kiln::providers::cpu
