// Kiln's int8 matrix products written back into the source ONNX model, in the operators ONNX
// Runtime's own dynamic quantization writes (its QOperator form, the one ONNX Runtime runs dynamic
// quantization in): each MatMul or Gemm that Kiln computes in int8 becomes
//
//   DynamicQuantizeLinear(A) -> MatMulInteger(A_q, W_q, A_zero_point) -> Cast(float)
//   -> Mul(by Mul(A_scale, W_scale)) [-> Add(beta C)]
//
// with W_q and W_scale Kiln's own symmetric per-output-column weights (ops::symmetric_int8_scales,
// Gemm's alpha folded into W_scale) and A quantized per tensor to uint8 at run time, as Kiln does:
// another engine running the file computes what Kiln's int8 computes, up to the order of float
// rounding. Everything else is the source model as it was.
#pragma once

#include <string>
#include <vector>

#include "kiln/status.h"

namespace kiln::frontend {

struct QuantizedOnnx {
  std::string model;                    // the serialized ModelProto
  std::vector<std::string> quantized;   // the source nodes rewritten
  std::vector<std::string> left_fp32;   // "product: why": int8 products this form cannot hold, left as they were
};

// One of Kiln's int8 products: its node and the source model's nodes it stands for.
struct Int8Product {
  std::string node;
  std::vector<std::string> sources;
  int weight_levels = 127;  // its weights' largest magnitude (compiler::NodePrecision::weight_levels)
};

// The ONNX model at `path` with the MatMul or Gemm node (B a float initializer of rank 2) among each
// product's sources rewritten as above; a product without one, or whose sources are not nodes of
// the main graph (a control-flow body's), is listed in left_fp32 with the reason. InvalidModel
// when the file does not parse; InvalidArgument when the model imports a default-domain opset
// below 11 (DynamicQuantizeLinear's).
Result<QuantizedOnnx> quantized_onnx(const std::string& path, const std::vector<Int8Product>& products);

}  // namespace kiln::frontend
