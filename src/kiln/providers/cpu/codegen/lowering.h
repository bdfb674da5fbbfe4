// Lowering of fused regions to loop IR, at the plan's concrete shapes: element-wise chains
// (kiln.ElementwiseChain), the row normalizations Softmax, LogSoftmax and LayerNormalization, and
// the Reduce* ops whose reduced dims are the innermost (one row per output element).
// UnsupportedOperator, naming the node, for a form with no lowering (the caller then keeps its
// library kernel): a chain step without a generated form, a Softmax over an axis that is not the
// innermost, LayerNormalization's optional Mean/InvStdDev outputs or a scale that is not one row,
// a reduction over dims that are not the innermost, one with nothing to fold, ReduceLogSumExp,
// ReduceMax and ReduceMin (a NaN must win, which OpenMP's max and min reductions do not promise).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kiln/providers/cpu/codegen/loop_ir.h"
#include "kiln/ir/graph.h"
#include "kiln/status.h"
#include "kiln/tensor.h"

namespace kiln::codegen {

// input_dims[i]: node input i's concrete dims (empty for an absent input); output: output 0's.
Result<LoopKernel> lower_elementwise_chain(const ir::Node& chain, const std::vector<std::vector<int64_t>>& input_dims,
                                           const std::vector<int64_t>& output);
Result<LoopKernel> lower_softmax(const ir::Node& softmax, const std::vector<int64_t>& x);
Result<LoopKernel> lower_layer_norm(const ir::Node& layer_norm, const std::vector<std::vector<int64_t>>& input_dims);
// `axes`: the value of the node's axes input when it is a constant (null when the graph computes it:
// then the reduction is not lowered).
Result<LoopKernel> lower_reduction(const ir::Node& reduction, const std::vector<int64_t>& x, const Tensor* axes);

}  // namespace kiln::codegen
