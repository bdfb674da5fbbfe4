// kiln.BlockQuantizedGather: rows of a block-quantized table as float32, as a GGUF decoder looks up
// its token embeddings without widening the whole table: data is a uint8 tensor [N, row bytes] of
// ggml blocks (attribute `block_type`, as kiln.BlockQuantizedMatMul's W), indices int64 of any
// shape; Y = indices' shape + [K], each row dequantized exactly (ops/ggml_blocks). An index outside
// [-N, N) is an InvalidArgument naming it. The kernel is the same loop on every provider: a few
// rows per call.
#include <vector>

#include "kiln/ops/block_quantized_matmul.h"
#include "kiln/ops/family_support.h"
#include "kiln/ops/op_families.h"
#include "kiln/ops/op_helpers.h"

namespace kiln::ops {
namespace {

Status block_gather_rule(InferenceContext& ctx) {
  KILN_RETURN_IF_ERROR(check_input_count(ctx, 2, 2));
  if (ctx.input_type(0).dtype != DType::kUInt8) return ctx.error("data must be uint8 (the blocks' bytes)");
  if (ctx.input_type(1).dtype != DType::kInt64) return ctx.error("indices must be int64");
  const std::optional<ir::Shape>& data = ctx.input_type(0).shape;
  const std::optional<ir::Shape>& indices = ctx.input_type(1).shape;
  if (data && data->rank() != 2) return ctx.error("data must have rank 2");
  std::optional<ir::Shape> y;
  if (data && (*data)[0].is_static() && (*data)[1].is_static() && indices) {
    KILN_ASSIGN_OR_RETURN(const BlockQuantizedWeight table, block_quantized_weight(ctx.node(), {(*data)[0].value(), (*data)[1].value()}));
    std::vector<ir::Dim> dims = indices->dims();
    dims.emplace_back(table.columns);
    y = ir::Shape(std::move(dims));
  }
  ctx.set_output_type(0, ir::TensorType{DType::kFloat, y});
  return Status::ok();
}

Status block_gather_kernel(KernelContext& ctx) {
  const Tensor& data = *ctx.input(0);
  const Tensor& indices = *ctx.input(1);
  KILN_ASSIGN_OR_RETURN(const BlockQuantizedWeight table, block_quantized_weight(ctx.node(), data.shape()));
  float* y = ctx.output(0)->data<float>();
  for (int64_t i = 0; i < indices.element_count(); ++i) {
    int64_t row = indices.data<int64_t>()[i];
    if (row < -table.rows || row >= table.rows)
      return invalid_argument(ctx.node().describe() + ": index " + std::to_string(row) + " is outside the table's " +
                              std::to_string(table.rows) + " rows");
    if (row < 0) row += table.rows;
    KILN_RETURN_IF_ERROR(dequantize(table.type, data.data<char>() + row * table.row_bytes, table.columns, y + i * table.columns));
  }
  return Status::ok();
}

}  // namespace

void register_block_quantized_gather_ops(OpRegistry& r) {
  r.add(OpDef{"kiln", "BlockQuantizedGather", 1, block_gather_rule, block_gather_kernel});
}

}  // namespace kiln::ops
