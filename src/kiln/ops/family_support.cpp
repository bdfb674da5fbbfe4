// Input checks shared by the shape rules of the elementwise, cast, softmax, reduce, normalization
// and matmul families.
#include "kiln/ops/family_support.h"

namespace kiln::ops {

Status check_input_count(const InferenceContext& ctx, size_t required, size_t max_inputs) {
  if (ctx.input_count() > max_inputs)
    return ctx.error("expects at most " + std::to_string(max_inputs) + " inputs, got " +
                     std::to_string(ctx.input_count()));
  for (size_t i = 0; i < required; ++i)
    if (!ctx.has_input(i))
      return ctx.error("expects at least " + std::to_string(required) + " inputs; input " + std::to_string(i) +
                       " is missing");
  return Status::ok();
}

Status check_same_dtype(const InferenceContext& ctx, size_t i, size_t j) {
  const DType a = ctx.input_type(i).dtype, b = ctx.input_type(j).dtype;
  if (a == DType::kUndefined || b == DType::kUndefined || a == b) return Status::ok();
  return ctx.error("inputs " + std::to_string(i) + " and " + std::to_string(j) + " must have the same element type, got " +
                   dtype_name(a) + " and " + dtype_name(b));
}

}  // namespace kiln::ops
