// Numeric precision: the arithmetic a product node (a convolution or a matrix product with constant
// weights) is computed in, as one table every consumer reads. A compile that reduces precision
// (compiler/precision_assignment.h) marks each such node with the attribute `precision`; the
// provider's kernel reads it, the artifact keeps it with the graph, the report lists it. A node
// without the attribute computes in float32.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/ir/graph.h"
#include "kiln/ops/activation_calibration.h"

namespace kiln::ops {

enum class Precision {
  kFp32,  // float32 throughout
  kBf16,  // bfloat16 products with float32 accumulation; everything else float32
  kInt8,  // 8-bit integer products: weights symmetric per output channel, activations per tensor
};

struct PrecisionInfo {
  Precision precision;
  const char* name;        // as options, attributes and reports spell it
  const char* arithmetic;  // what it computes, for help texts and reports
};

// Every precision, float32 first.
const std::vector<PrecisionInfo>& precision_table();
const char* precision_name(Precision precision);
std::optional<Precision> parse_precision(std::string_view name);
// "fp32, bf16, int8": for messages listing the choices.
std::string precision_names();
// A preference of precisions, "int8+bf16" (each product takes the first its provider computes it
// in; fp32 otherwise): parsed, nullopt for an unknown or repeated name; and written back.
std::optional<std::vector<Precision>> parse_preference(std::string_view text);
std::string preference_name(const std::vector<Precision>& preference);

// The node attribute that carries a product's reduced precision (absent: float32).
inline constexpr const char* kPrecisionAttribute = "precision";
// The precision `node` computes in: its attribute's, float32 without one. An unknown name is
// float32 too; the verifier of reduced nodes (precision_assignment) refuses one before any kernel.
Precision node_precision(const ir::Node& node);

// Whether `node` is a product whose precision a compile may reduce: Conv, kiln.FusedConv, or
// MatMul, kiln.FusedMatMul or Gemm of a 2-d matrix, whose weights (input 1) are a float32 constant.
bool reducible_product(const ir::Node& node);

// int8 products: the weights' output-channel axis (Conv: 0; MatMul: 1; Gemm: 0 with transB, else 1)
// and, per output channel, the symmetric scale max|w| / levels (1 for a channel of zeros) that maps
// them onto [-levels, levels]: 127, or 63 where the provider's int8 arithmetic would overflow 8-bit
// weights (Provider::int8_weight_levels). The precision stage records the scales on the node as
// `weight_scales`; the kernel quantizes the weights with them and the artifact keeps them with
// the graph.
int64_t weight_channel_axis(const ir::Node& node);
std::vector<float> symmetric_int8_scales(const Tensor& weights, int64_t channel_axis, int levels = 127);
// The weights quantized with those scales: round(w / scale) (half to even), saturated to
// [-127, 127], in the weights' own layout.
std::vector<int8_t> quantize_symmetric_int8(const Tensor& weights, int64_t channel_axis, const std::vector<float>& scales);
inline constexpr const char* kWeightScalesAttribute = "weight_scales";
// int8 products with a calibrated input (static quantization): the input's uint8 scale and zero
// point, fixed at compile time (ops/activation_calibration.h). Without them the input is quantized
// per run over its own range (dynamic quantization).
inline constexpr const char* kInputScaleAttribute = "input_scale";
inline constexpr const char* kInputZeroPointAttribute = "input_zero_point";

// Reduced values between products: a value that a bf16 product writes and only bf16 products read
// (as their activation input) stays bfloat16 in the graph, and one that an int8 product writes and
// only int8 products with its calibrated quantization read stays uint8 (compiler/
// precision_assignment.h), so it is converted neither after its producer nor before its readers.
// The fused products (kiln.FusedConv, kiln.FusedMatMul) around it name their output's element type
// with this attribute, "bfloat16", "uint8" or "float"; without it a fused product's output has its
// input's type. A uint8 output is quantized after the epilogue as `output_scale` and
// `output_zero_point` say (its readers' input_scale and input_zero_point).
inline constexpr const char* kOutputDtypeAttribute = "output_dtype";
inline constexpr const char* kOutputScaleAttribute = "output_scale";
inline constexpr const char* kOutputZeroPointAttribute = "output_zero_point";
// A fused product's residual Z kept uint8 (the output of an int8 product before it, read by int8
// products only) is summed in its own quantization, which the product carries as these; a residual
// kept bfloat16 or uint8 is summed into an output of its type, or widened into a float32 one.
inline constexpr const char* kResidualScaleAttribute = "residual_scale";
inline constexpr const char* kResidualZeroPointAttribute = "residual_zero_point";
// Makes a plain Conv or MatMul its fused form (kiln.FusedConv, kiln.FusedMatMul: the same inputs and
// attributes, no epilogue), which computes the same and whose output type output_dtype can set; a
// fused product stays as it is.
void as_fused_product(ir::Node& product);
// The element type `node`'s output_dtype names: nullopt when absent, InvalidModel for a name other
// than float, bfloat16 or uint8, or uint8 without a valid output_scale and output_zero_point.
Result<std::optional<DType>> fused_output_dtype(const ir::Node& node);
// A product's calibrated input quantization (input_scale, input_zero_point), its uint8 output's
// (output_scale, output_zero_point) and its uint8 residual's (residual_scale, residual_zero_point);
// nullopt without them.
std::optional<Uint8Quantization> input_quantization(const ir::Node& node);
std::optional<Uint8Quantization> output_quantization(const ir::Node& node);
std::optional<Uint8Quantization> residual_quantization(const ir::Node& node);
// Whether a residual of type `residual` may be summed into `node`'s output of type `output`: the
// same type, or bfloat16 or uint8 (in residual_scale and residual_zero_point) widened into float32.
// InvalidModel naming the node otherwise.
Status check_residual_dtype(const ir::Node& node, DType residual, DType output);
// round(x / scale) + zero point (half to even), saturated to [0, 255]; NaN to the zero point.
uint8_t quantize_uint8(float x, const Uint8Quantization& q);
float dequantize_uint8(uint8_t q, const Uint8Quantization& quantization);

}  // namespace kiln::ops
