// Lowering to loop IR: element-wise chains step by step; Softmax and LayerNormalization as row
// reductions over the normalized (flattened trailing) dims; Reduce* as one row reduction per
// output element.
#include "kiln/providers/cpu/codegen/lowering.h"

#include <optional>
#include <set>

#include "kiln/ops/elementwise_chain.h"
#include "kiln/ops/elementwise_functions.h"
#include "kiln/ops/op_helpers.h"
#include "kiln/ops/reduction_axes.h"

namespace kiln::codegen {
namespace {

using E = ops::Elementwise;

// Whether generated code computes a chain step.
bool generates(const ops::ChainStep& step) { return !step.entry().generated.empty(); }

int64_t product(const std::vector<int64_t>& dims, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t d = begin; d < end; ++d) p *= dims[d];
  return p;
}

// `axis` of a rank-`rank` tensor in [0, rank); InvalidModel naming the node when out of range.
Result<size_t> normalized_axis(const ir::Node& node, int64_t axis, size_t rank) {
  Result<int64_t> normalized = ops::normalize_axis(axis, static_cast<int64_t>(rank));
  if (!normalized.is_ok()) return normalized.status().with_context(node.describe());
  return static_cast<size_t>(normalized.value());
}

Status unsupported(const ir::Node& node, const std::string& why) {
  return unsupported_operator(node.describe() + ": no generated kernel for " + why);
}

}  // namespace

Result<LoopKernel> lower_elementwise_chain(const ir::Node& chain, const std::vector<std::vector<int64_t>>& input_dims,
                                           const std::vector<int64_t>& output) {
  LoopKernel k = loop_nest("", input_dims, output);
  int value = k.add(Instruction::load(0));
  KILN_ASSIGN_OR_RETURN(const std::vector<ops::ChainStep> steps, ops::chain_steps(chain));
  for (const ops::ChainStep& step : steps) {
    if (!generates(step)) return unsupported(chain, "chain step " + std::string(step.name()));
    if ((step.entry().operands == 2) != step.is_binary())
      return invalid_model(chain.describe() + ": step " + std::string(step.name()) + " has the wrong number of operands");
    if (!step.is_binary()) {
      value = k.add(Instruction::unary(step.function, value, step.alpha, step.beta));
      continue;
    }
    if (step.operand <= 0 || static_cast<size_t>(step.operand) >= input_dims.size())
      return invalid_model(chain.describe() + ": step " + std::string(step.name()) + " names input " + std::to_string(step.operand));
    const int operand = k.add(Instruction::load(step.operand));
    value = k.add(step.operand_first ? Instruction::binary(step.function, operand, value)
                                     : Instruction::binary(step.function, value, operand));
  }
  return k;
}

Result<LoopKernel> lower_softmax(const ir::Node& softmax, const std::vector<int64_t>& x) {
  if (x.empty()) return unsupported(softmax, "a scalar");
  // Opset 13+ normalizes one axis; before, the flattened dims from `axis` on as one.
  const bool one_axis = softmax.opset_version >= 13;
  KILN_ASSIGN_OR_RETURN(const size_t axis, normalized_axis(softmax, softmax.attr_int("axis", one_axis ? -1 : 1), x.size()));
  if (one_axis && axis + 1 != x.size()) return unsupported(softmax, "an axis that is not the innermost");
  const int64_t rows = product(x, 0, axis), row = product(x, axis, x.size());
  LoopKernel k = row_nest("", rows, row, {false});
  const int v = k.add(Instruction::load(0));
  const int max = k.add(Instruction::reduce(Instruction::Fold::kMax, v));
  const int shifted = k.add(Instruction::binary(E::kSub, v, max));
  const int e = k.add(Instruction::unary(E::kExp, shifted));
  const int sum = k.add(Instruction::reduce(Instruction::Fold::kSum, e));
  if (softmax.op_type == "LogSoftmax")
    k.add(Instruction::binary(E::kSub, shifted, k.add(Instruction::unary(E::kLog, sum))));
  else
    k.add(Instruction::binary(E::kDiv, e, sum));
  return k;
}

Result<LoopKernel> lower_layer_norm(const ir::Node& layer_norm, const std::vector<std::vector<int64_t>>& input_dims) {
  for (size_t i = 1; i < layer_norm.outputs.size(); ++i)
    if (layer_norm.outputs[i]) return unsupported(layer_norm, "the Mean and InvStdDev outputs");
  if (layer_norm.attr_int("stash_type", 1) != 1) return unsupported(layer_norm, "a stash_type other than float");
  const std::vector<int64_t>& x = input_dims[0];
  KILN_ASSIGN_OR_RETURN(const size_t axis, normalized_axis(layer_norm, layer_norm.attr_int("axis", -1), x.size()));
  const int64_t rows = product(x, 0, axis), row = product(x, axis, x.size());
  const bool has_bias = input_dims.size() > 2 && !input_dims[2].empty();
  for (size_t i = 1; i < (has_bias ? 3u : 2u); ++i)
    if (product(input_dims[i], 0, input_dims[i].size()) != row) return unsupported(layer_norm, "a scale or bias that is not one whole row");
  std::vector<bool> shared_row = {false, true};
  if (has_bias) shared_row.push_back(true);
  LoopKernel k = row_nest("", rows, row, shared_row);
  const int v = k.add(Instruction::load(0));
  const int inverse_n = k.add(Instruction::constant(1.0f / static_cast<float>(row)));
  const int mean = k.add(Instruction::binary(E::kMul, k.add(Instruction::reduce(Instruction::Fold::kSum, v)), inverse_n));
  const int centred = k.add(Instruction::binary(E::kSub, v, mean));
  const int square = k.add(Instruction::binary(E::kMul, centred, centred));
  const int variance = k.add(Instruction::binary(E::kMul, k.add(Instruction::reduce(Instruction::Fold::kSum, square)), inverse_n));
  const int epsilon = k.add(Instruction::constant(layer_norm.attr_float("epsilon", 1e-5f)));
  const int deviation = k.add(Instruction::unary(E::kSqrt, k.add(Instruction::binary(E::kAdd, variance, epsilon))));
  const int normalized = k.add(Instruction::binary(E::kDiv, centred, deviation));
  const int scaled = k.add(Instruction::binary(E::kMul, normalized, k.add(Instruction::load(1))));
  if (has_bias) k.add(Instruction::binary(E::kAdd, scaled, k.add(Instruction::load(2))));
  return k;
}

Result<LoopKernel> lower_reduction(const ir::Node& reduction, const std::vector<int64_t>& x, const Tensor* axes) {
  const std::string& op = reduction.op_type;
  // Max and Min must let a NaN through (the reference's rule), which OpenMP's max/min do not.
  if (op == "ReduceLogSumExp" || op == "ReduceMax" || op == "ReduceMin") return unsupported(reduction, op);
  KILN_ASSIGN_OR_RETURN(ops::ReductionAxes spec, ops::reduction_axes(reduction, reduction.input(1) != nullptr, axes));
  if (!spec.axes) return unsupported(reduction, "axes known only at run time");
  if (spec.noop) return unsupported(reduction, "a reduction with no axes");
  Result<std::vector<bool>> reduced = ops::reduced_dims(*spec.axes, static_cast<int64_t>(x.size()));
  if (!reduced.is_ok()) return reduced.status().with_context(reduction.describe());
  const std::optional<ops::ReductionView> view = ops::reduction_view(x, reduced.value());
  if (!view || view->inner > 1) return unsupported(reduction, "reduced dims that are not the innermost");
  const int64_t rows = view->outer, row = view->count;
  if (row <= 1 || rows * row == 0) return unsupported(reduction, "a reduction with nothing to fold");
  LoopKernel k = row_nest("", rows, row, {false});
  const int v = k.add(Instruction::load(0));
  int operand = v;
  if (op == "ReduceL1") operand = k.add(Instruction::unary(E::kAbs, v));
  if (op == "ReduceL2" || op == "ReduceSumSquare") operand = k.add(Instruction::binary(E::kMul, v, v));
  const Instruction::Fold fold = op == "ReduceProd" ? Instruction::Fold::kProd : Instruction::Fold::kSum;
  const int folded = k.add(Instruction::reduce(fold, operand));
  if (op == "ReduceMean") k.add(Instruction::binary(E::kMul, folded, k.add(Instruction::constant(1.0f / static_cast<float>(row)))));
  if (op == "ReduceL2") k.add(Instruction::unary(E::kSqrt, folded));
  if (op == "ReduceLogSum") k.add(Instruction::unary(E::kLog, folded));
  return k;
}

}  // namespace kiln::codegen
