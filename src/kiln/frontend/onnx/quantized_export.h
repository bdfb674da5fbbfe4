// Kiln's int8 products written back into the source ONNX model, so that another engine computes
// what Kiln's int8 computes, up to the order of float rounding. Two forms:
//
// - a matrix product (MatMul, Gemm) whose input is quantized per run (dynamic) takes ONNX Runtime's
//   own dynamic-quantization operators (its QOperator form, the one it runs dynamic int8 in):
//     DynamicQuantizeLinear(A) -> MatMulInteger(A_q, W_q, A_zero_point) -> Cast(float)
//     -> Mul(by Mul(A_scale, W_scale)) [-> Add(beta C)]
//   with Gemm's alpha folded into W_scale;
// - a product with a calibrated input (static), and any convolution, takes the QDQ form: the node
//   kept, its input replaced by DequantizeLinear(QuantizeLinear(A, scale, zero point)) (dynamic:
//   DynamicQuantizeLinear's outputs), one pair for all the products that read A so, and its
//   weights by DequantizeLinear(W_q, W_scale, axis) (below opset 13, which added the axis:
//   DequantizeLinear(W_q, 1) -> Mul(W_scale, broadcast)), and a calibrated product's bias (from
//   opset 13) by DequantizeLinear(B_q, A_scale x W_scale, axis 0) of int32. Where A is written by
//   a product and read only by products (Kiln keeps it uint8 between them), that one
//   QuantizeLinear follows its writer, the pattern ONNX Runtime runs on its int8 kernels
//   (QLinearConv, QLinearMatMul). A residual Kiln keeps uint8 and sums into a product's output
//   reaches the source's Add dequantized likewise, and a MaxPool whose output is so quantized
//   reads its input in the same quantization (exact: the max commutes with it).
//
// W_q and W_scale are Kiln's own symmetric per-output-channel weights (ops::symmetric_int8_scales at
// the product's weight levels); A is uint8 per tensor. Everything else is the source model as it was.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kiln/status.h"

namespace kiln::frontend {

struct QuantizedOnnx {
  enum class Form { kMatMulInteger, kQdq };
  struct Rewritten {
    std::string node;  // the source node
    Form form;
  };
  std::string model;                   // the serialized ModelProto
  std::vector<Rewritten> quantized;    // the source nodes rewritten
  std::vector<std::string> left_fp32;  // "product: why": int8 products neither form can hold, left as they were
};

// One of Kiln's int8 products: its node, the source model's nodes it stands for, and (as the
// report records them: report::PrecisionSection::Product) its weights' levels and its input's
// calibrated quantization (scale 0: dynamic).
struct Int8Product {
  std::string node;
  std::vector<std::string> sources;
  int weight_levels = 127;
  float input_scale = 0;
  int32_t input_zero_point = 0;
  // The residual it sums into its output where Kiln keeps that uint8 (scale 0 otherwise): the
  // source's Add reads it dequantized from that quantization, as Kiln sums it.
  float residual_scale = 0;
  int32_t residual_zero_point = 0;
};

// The ONNX model at `path` with the Conv, MatMul or Gemm node (weights a float initializer, of rank
// 2 for the matrix products) among each product's sources rewritten as above; a product without
// one, whose sources are not nodes of the main graph (a control-flow body's), or which shares its
// node with another product (Kiln split it over the inputs of a Concat, each part with its own
// scales) is listed in left_fp32 with the reason. InvalidModel when the file does not parse; InvalidArgument when the model imports a
// default-domain opset below 11 (DynamicQuantizeLinear's).
Result<QuantizedOnnx> quantized_onnx(const std::string& path, const std::vector<Int8Product>& products);

}  // namespace kiln::frontend
