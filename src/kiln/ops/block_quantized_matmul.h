// kiln.BlockQuantizedMatMul: Y = X x W^T with W held in one of ggml's block types, as a GGUF file
// stores a weight matrix: W is a uint8 tensor [N, row bytes], each row K values in whole blocks of
// the type (attribute `block_type`, ggml's type id; ops/ggml_blocks.h). X is float32 [..., K], Y
// float32 [..., N]. The reference dequantizes each row (ggml_blocks' exact dequantization) and sums
// in double; the cpu kernel multiplies in the quantized domain.
#pragma once

#include <cstdint>

#include "kiln/ir/graph.h"
#include "kiln/ops/ggml_blocks.h"
#include "kiln/status.h"

namespace kiln::ops {

inline constexpr const char* kBlockTypeAttribute = "block_type";

struct BlockQuantizedWeight {
  GgmlType type;
  int64_t rows = 0;       // N
  int64_t columns = 0;    // K
  int64_t row_bytes = 0;
};

// The weight's layout from the node's block_type and W's dims [N, row bytes]: InvalidModel naming
// the node when the type is not a block type of the table or the rows are not whole blocks.
Result<BlockQuantizedWeight> block_quantized_weight(const ir::Node& node, const std::vector<int64_t>& w_dims);

}  // namespace kiln::ops
