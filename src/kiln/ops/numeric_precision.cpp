// The precision table (see numeric_precision.h).
#include "kiln/ops/numeric_precision.h"

namespace kiln::ops {

const std::vector<PrecisionInfo>& precision_table() {
  static const std::vector<PrecisionInfo> table = {
      {Precision::kFp32, "fp32", "float32 throughout"},
      {Precision::kBf16, "bf16", "bfloat16 weights and activations into products accumulated in float32; other ops in float32"},
      {Precision::kInt8, "int8",
       "int8 weights (symmetric, per output channel) and uint8 activations (per tensor) into products accumulated in "
       "int32; other ops in float32"},
  };
  return table;
}

const char* precision_name(Precision precision) {
  for (const PrecisionInfo& info : precision_table())
    if (info.precision == precision) return info.name;
  return "?";
}

std::optional<Precision> parse_precision(std::string_view name) {
  for (const PrecisionInfo& info : precision_table())
    if (name == info.name) return info.precision;
  return std::nullopt;
}

std::string precision_names() {
  std::string names;
  for (const PrecisionInfo& info : precision_table()) names += (names.empty() ? "" : ", ") + std::string(info.name);
  return names;
}

Precision node_precision(const ir::Node& node) {
  const ir::Attribute* attribute = node.attr(kPrecisionAttribute);
  if (!attribute || attribute->kind != ir::Attribute::Kind::kString) return Precision::kFp32;
  return parse_precision(attribute->s).value_or(Precision::kFp32);
}

bool reducible_product(const ir::Node& node) {
  const bool product = node.is("", "Conv") || node.is("kiln", "FusedConv") || node.is("", "MatMul") ||
                       node.is("kiln", "FusedMatMul") || node.is("", "Gemm");
  const ir::Value* weights = node.input(1);
  return product && weights && weights->initializer && weights->initializer->dtype() == DType::kFloat;
}

}  // namespace kiln::ops
