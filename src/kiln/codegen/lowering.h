// Lowering of fused regions to loop IR, at the plan's concrete shapes: element-wise chains
// (kiln.ElementwiseChain), and the row normalizations Softmax, LogSoftmax and LayerNormalization.
// UnsupportedOperator, naming the node, for a form with no lowering (the caller then keeps its
// library kernel): a chain step without a generated form, a Softmax over an axis that is not the
// innermost, LayerNormalization's optional Mean/InvStdDev outputs or a scale that is not one row.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kiln/codegen/loop_ir.h"
#include "kiln/ir/graph.h"
#include "kiln/status.h"

namespace kiln::codegen {

// input_dims[i]: node input i's concrete dims (empty for an absent input); output: output 0's.
Result<LoopKernel> lower_elementwise_chain(const ir::Node& chain, const std::vector<std::vector<int64_t>>& input_dims,
                                           const std::vector<int64_t>& output);
Result<LoopKernel> lower_softmax(const ir::Node& softmax, const std::vector<int64_t>& x);
Result<LoopKernel> lower_layer_norm(const ir::Node& layer_norm, const std::vector<std::vector<int64_t>>& input_dims);

}  // namespace kiln::codegen
