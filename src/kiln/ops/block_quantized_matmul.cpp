// kiln.BlockQuantizedMatMul (block_quantized_matmul.h): the shape rule and the reference kernel.
#include "kiln/ops/block_quantized_matmul.h"

#include <vector>

#include "kiln/ops/family_support.h"
#include "kiln/ops/op_families.h"
#include "kiln/ops/op_helpers.h"

namespace kiln::ops {

Result<BlockQuantizedWeight> block_quantized_weight(const ir::Node& node, const std::vector<int64_t>& w_dims) {
  const int64_t id = node.attr_int(kBlockTypeAttribute, -1);
  const std::optional<GgmlType> type = id >= 0 && id <= UINT32_MAX ? ggml_type(static_cast<uint32_t>(id)) : std::nullopt;
  if (!type || type->block_values == 1)
    return invalid_model(node.describe() + ": block_type " + std::to_string(id) + " (" +
                         (id >= 0 && id <= UINT32_MAX ? ggml_type_name(static_cast<uint32_t>(id)) : std::string("none")) +
                         ") is not a block-quantized type");
  if (w_dims.size() != 2 || w_dims[1] % type->block_bytes != 0)
    return invalid_model(node.describe() + ": W must be [N, row bytes] with rows of whole " + std::string(type->name) + " blocks of " +
                         std::to_string(type->block_bytes) + " bytes");
  return BlockQuantizedWeight{*type, w_dims[0], w_dims[1] / type->block_bytes * type->block_values, w_dims[1]};
}

namespace {

Status block_matmul_rule(InferenceContext& ctx) {
  KILN_RETURN_IF_ERROR(check_input_count(ctx, 2, 2));
  if (ctx.input_type(0).dtype != DType::kFloat) return ctx.error("X must be float32");
  if (ctx.input_type(1).dtype != DType::kUInt8) return ctx.error("W must be uint8 (the blocks' bytes)");
  const std::optional<ir::Shape>& x = ctx.input_type(0).shape;
  const std::optional<ir::Shape>& w = ctx.input_type(1).shape;
  std::optional<ir::Shape> y;
  if (w && w->rank() != 2) return ctx.error("W must have rank 2");
  if (x && x->rank() < 1) return ctx.error("X must have rank >= 1");
  if (w && (*w)[0].is_static() && (*w)[1].is_static()) {
    KILN_ASSIGN_OR_RETURN(const BlockQuantizedWeight weight, block_quantized_weight(ctx.node(), {(*w)[0].value(), (*w)[1].value()}));
    if (x) {
      const ir::Dim& k = (*x)[x->rank() - 1];
      if (k.is_static() && k.value() != weight.columns)
        return ctx.error("X's last dim " + std::to_string(k.value()) + " differs from W's " + std::to_string(weight.columns) + " columns");
      std::vector<ir::Dim> dims = x->dims();
      dims.back() = ir::Dim(weight.rows);
      y = ir::Shape(std::move(dims));
    }
  }
  ctx.set_output_type(0, ir::TensorType{DType::kFloat, y});
  return Status::ok();
}

Status block_matmul_reference(KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  const Tensor& w = *ctx.input(1);
  KILN_ASSIGN_OR_RETURN(const BlockQuantizedWeight weight, block_quantized_weight(ctx.node(), w.shape()));
  if (x.shape().back() != weight.columns) return ctx.error("X's last dim differs from W's columns");
  const int64_t rows = weight.columns == 0 ? 0 : x.element_count() / weight.columns;
  std::vector<float> row(static_cast<size_t>(weight.columns));
  float* y = ctx.output(0)->data<float>();
  for (int64_t n = 0; n < weight.rows; ++n) {
    KILN_RETURN_IF_ERROR(dequantize(weight.type, w.data<char>() + n * weight.row_bytes, weight.columns, row.data()));
    for (int64_t m = 0; m < rows; ++m) {
      const float* xs = x.data<float>() + m * weight.columns;
      double sum = 0;
      for (int64_t k = 0; k < weight.columns; ++k) sum += static_cast<double>(xs[k]) * row[static_cast<size_t>(k)];
      y[m * weight.rows + n] = static_cast<float>(sum);
    }
  }
  return Status::ok();
}

}  // namespace

void register_block_quantized_matmul_ops(OpRegistry& r) {
  r.add(OpDef{"kiln", "BlockQuantizedMatMul", 1, block_matmul_rule, block_matmul_reference});
}

}  // namespace kiln::ops
