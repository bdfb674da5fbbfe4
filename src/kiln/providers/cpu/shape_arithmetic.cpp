// Shape arithmetic on the cpu provider: which nodes qualify, and their reference kernels.
#include "kiln/providers/cpu/shape_arithmetic.h"

#include "kiln/providers/cpu/cpu_kernels.h"

#include <set>

namespace kiln::providers::cpu {
namespace {

const std::set<std::string> kShapeOps = {"Shape", "Size",  "Gather", "Concat",    "Unsqueeze", "Squeeze", "Reshape",
                                         "Slice", "Equal", "Less",   "Greater",   "Where",     "Expand",  "Add",
                                         "Sub",   "Mul",   "Div",    "Cast",      "Not",       "And",     "Or",
                                         "Min",   "Max",   "Range",  "Identity", "ConstantOfShape", "Neg", "Abs"};

bool integer_or_bool(const ir::Value* v) {
  if (!v->type.is_tensor()) return false;
  switch (v->type.dtype) {
    case DType::kInt8: case DType::kInt16: case DType::kInt32: case DType::kInt64:
    case DType::kUInt8: case DType::kUInt16: case DType::kUInt32: case DType::kUInt64:
    case DType::kBool:
      return true;
    default:
      return false;
  }
}

}  // namespace

bool is_shape_arithmetic(const ir::Node& node) {
  if (!node.domain.empty() || !kShapeOps.count(node.op_type) || node.has_subgraph()) return false;
  const bool reads_dims_only = node.op_type == "Shape" || node.op_type == "Size";
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    const ir::Value* in = node.inputs[i];
    if (in && !(reads_dims_only && i == 0 && in->type.is_tensor()) && !integer_or_bool(in)) return false;
  }
  for (const ir::Value* out : node.outputs)
    if (out && !integer_or_bool(out)) return false;
  return true;
}

Result<ops::Kernel> shape_arithmetic_kernel(const ir::Node& node) { return reference_kernel(node); }

}  // namespace kiln::providers::cpu
