// The precision table (see numeric_precision.h).
#include "kiln/ops/numeric_precision.h"

#include <algorithm>
#include <cmath>

#include "kiln/ops/quantization.h"

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

std::optional<std::vector<Precision>> parse_preference(std::string_view text) {
  std::vector<Precision> preference;
  while (true) {
    const size_t plus = text.find('+');
    const std::optional<Precision> p = parse_precision(text.substr(0, plus));
    if (!p || std::find(preference.begin(), preference.end(), *p) != preference.end()) return std::nullopt;
    preference.push_back(*p);
    if (plus == std::string_view::npos) return preference;
    text.remove_prefix(plus + 1);
  }
}

std::string preference_name(const std::vector<Precision>& preference) {
  std::string name;
  for (const Precision p : preference) name += (name.empty() ? "" : "+") + std::string(precision_name(p));
  return name.empty() ? precision_name(Precision::kFp32) : name;
}

Precision node_precision(const ir::Node& node) {
  const ir::Attribute* attribute = node.attr(kPrecisionAttribute);
  if (!attribute || attribute->kind != ir::Attribute::Kind::kString) return Precision::kFp32;
  return parse_precision(attribute->s).value_or(Precision::kFp32);
}

void as_fused_product(ir::Node& product) {
  if (product.domain != "" || (product.op_type != "Conv" && product.op_type != "MatMul")) return;
  product.op_type = product.op_type == "Conv" ? "FusedConv" : "FusedMatMul";
  product.domain = "kiln";
  product.opset_version = 1;
}

std::optional<Uint8Quantization> input_quantization(const ir::Node& node) {
  if (!node.attributes.count(kInputScaleAttribute)) return std::nullopt;
  return Uint8Quantization{node.attr_float(kInputScaleAttribute, 1), static_cast<int32_t>(node.attr_int(kInputZeroPointAttribute, 0))};
}

std::optional<Uint8Quantization> output_quantization(const ir::Node& node) {
  if (!node.attributes.count(kOutputScaleAttribute)) return std::nullopt;
  return Uint8Quantization{node.attr_float(kOutputScaleAttribute, 1), static_cast<int32_t>(node.attr_int(kOutputZeroPointAttribute, 0))};
}

std::optional<Uint8Quantization> residual_quantization(const ir::Node& node) {
  if (!node.attributes.count(kResidualScaleAttribute)) return std::nullopt;
  return Uint8Quantization{node.attr_float(kResidualScaleAttribute, 1), static_cast<int32_t>(node.attr_int(kResidualZeroPointAttribute, 0))};
}

uint8_t quantize_uint8(float x, const Uint8Quantization& q) {
  return std::isnan(x) ? static_cast<uint8_t>(q.zero_point) : round_and_saturate<uint8_t>(x / q.scale, q.zero_point);
}

float dequantize_uint8(uint8_t q, const Uint8Quantization& quantization) {
  return static_cast<float>(static_cast<int32_t>(q) - quantization.zero_point) * quantization.scale;
}

namespace {
bool valid(const std::optional<Uint8Quantization>& q) {
  return q && q->scale > 0 && std::isfinite(q->scale) && q->zero_point >= 0 && q->zero_point <= 255;
}
}  // namespace

Result<std::optional<DType>> fused_output_dtype(const ir::Node& node) {
  const ir::Attribute* attribute = node.attr(kOutputDtypeAttribute);
  if (!attribute) return std::optional<DType>();
  const std::string invalid = node.describe() + ": attribute " + kOutputDtypeAttribute;
  for (const DType dtype : {DType::kFloat, DType::kBFloat16, DType::kUInt8}) {
    if (attribute->kind != ir::Attribute::Kind::kString || attribute->s != dtype_name(dtype)) continue;
    if (dtype == DType::kUInt8) {
      if (!valid(output_quantization(node)))
        return invalid_model(invalid + " \"uint8\" needs " + kOutputScaleAttribute + " (positive, finite) and " +
                             kOutputZeroPointAttribute + " (0 to 255)");
    }
    return std::optional<DType>(dtype);
  }
  return invalid_model(invalid + " must be \"float\", \"bfloat16\" or \"uint8\"");
}

Status check_residual_dtype(const ir::Node& node, DType residual, DType output) {
  const std::string what = node.describe() + ": residual of type " + dtype_name(residual) + " summed into an output of type " + dtype_name(output);
  const bool widened = output == DType::kFloat && (residual == DType::kBFloat16 || residual == DType::kUInt8);
  if (residual != output && !widened) return invalid_model(what);
  if (residual == DType::kUInt8 && !valid(residual_quantization(node)))
    return invalid_model(what + " needs " + kResidualScaleAttribute + " (positive, finite) and " + kResidualZeroPointAttribute + " (0 to 255)");
  return Status::ok();
}

bool reducible_product(const ir::Node& node) {
  const bool convolution = node.is("", "Conv") || node.is("kiln", "FusedConv");
  const bool matrix_product = node.is("", "MatMul") || node.is("kiln", "FusedMatMul") || node.is("", "Gemm");
  const ir::Value* weights = node.input(1);
  if (!(convolution || matrix_product) || !weights || !weights->initializer || weights->initializer->dtype() != DType::kFloat)
    return false;
  return convolution || weights->initializer->shape().size() == 2;
}

int64_t weight_channel_axis(const ir::Node& node) {
  if (node.is("", "Gemm")) return node.attr_int("transB", 0) != 0 ? 0 : 1;
  return node.is("", "MatMul") || node.is("kiln", "FusedMatMul") ? 1 : 0;
}

std::vector<float> symmetric_int8_scales(const Tensor& weights, int64_t channel_axis, int levels) {
  const std::vector<int64_t>& dims = weights.shape();
  const int64_t channels = dims[static_cast<size_t>(channel_axis)];
  int64_t inner = 1;
  for (size_t i = static_cast<size_t>(channel_axis) + 1; i < dims.size(); ++i) inner *= dims[i];
  std::vector<float> largest(static_cast<size_t>(channels), 0.0f);
  const float* w = weights.data<float>();
  for (int64_t i = 0; i < weights.element_count(); ++i) {
    float& m = largest[static_cast<size_t>((i / inner) % channels)];
    m = std::max(m, std::fabs(w[i]));
  }
  for (float& m : largest) m = m > 0 && std::isfinite(m) ? m / static_cast<float>(levels) : 1.0f;
  return largest;
}

std::vector<int8_t> quantize_symmetric_int8(const Tensor& weights, int64_t channel_axis, const std::vector<float>& scales) {
  const std::vector<int64_t>& dims = weights.shape();
  const auto channels = static_cast<int64_t>(scales.size());
  int64_t inner = 1;
  for (size_t i = static_cast<size_t>(channel_axis) + 1; i < dims.size(); ++i) inner *= dims[i];
  std::vector<int8_t> quantized(static_cast<size_t>(weights.element_count()));
  const float* w = weights.data<float>();
  for (int64_t i = 0; i < weights.element_count(); ++i) {
    const float q = std::nearbyint(w[i] / scales[static_cast<size_t>((i / inner) % channels)]);
    quantized[static_cast<size_t>(i)] = static_cast<int8_t>(q != q ? 0.0f : std::clamp(q, -127.0f, 127.0f));
  }
  return quantized;
}

}  // namespace kiln::ops
