// Node FLOP estimates.
#include "kiln/analysis/flops.h"

namespace kiln::analysis {
namespace {

// Product of a value's dims, symbolic or unknown dims counted as 1; 0 without a shape.
int64_t elements(const ir::Value* v) {
  if (!v || !v->type.is_tensor() || !v->type.shape) return 0;
  int64_t n = 1;
  for (const ir::Dim& d : v->type.shape->dims()) n *= d.is_static() ? d.value() : 1;
  return n;
}

int64_t dim(const ir::Value* v, int64_t axis) {
  if (!v || !v->type.shape || v->type.shape->rank() == 0) return 1;
  const auto rank = static_cast<int64_t>(v->type.shape->rank());
  const ir::Dim& d = (*v->type.shape)[static_cast<size_t>(axis < 0 ? axis + rank : axis)];
  return d.is_static() ? d.value() : 1;
}

}  // namespace

int64_t estimate_flops(const ir::Node& node) {
  const ir::Value* y = node.outputs.empty() ? nullptr : node.outputs[0];
  if (node.is("", "Conv") || node.is("kiln", "FusedConv")) {
    // Each output element: C/group * kernel taps multiply-adds; W is [M, C/group, k...].
    const int64_t w_elements = elements(node.input(1)), out_channels = dim(node.input(1), 0);
    return 2 * elements(y) * (out_channels ? w_elements / out_channels : 0) + elements(y);
  }
  if (node.is("", "MatMul") || node.is("kiln", "FusedMatMul") || node.is("kiln", "BlockQuantizedMatMul")) return 2 * elements(y) * dim(node.input(0), -1) + elements(y);
  if (node.is("", "Gemm")) {
    const int64_t k = node.attr_int("transA", 0) ? dim(node.input(0), 0) : dim(node.input(0), 1);
    return 2 * elements(y) * k + elements(y);
  }
  return elements(y);
}

}  // namespace kiln::analysis
