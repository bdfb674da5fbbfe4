// The epilogue of kiln.FusedConv and kiln.FusedMatMul on oneDNN: the residual Z as a sum post-op
// (the output first receives a copy of Z; a binary-add post-op is far slower in oneDNN's
// GEMM-based kernels) and the activation as an eltwise post-op; a uint8 output's quantization last.
#pragma once

#include <dnnl.hpp>
#include <optional>
#include <vector>

#include "kiln/ops/fused_product_inputs.h"
#include "kiln/ir/graph.h"
#include "kiln/ops/activation.h"
#include "kiln/ops/op_registry.h"
#include "kiln/providers/provider.h"
#include "kiln/status.h"

namespace kiln::providers::cpu {

constexpr size_t kResidualInput = ops::kFusedResidualInput;

// One oneDNN eltwise algorithm with its alpha and beta.
struct EltwiseOp {
  dnnl::algorithm algorithm;
  float alpha = 0, beta = 0;
};
// The oneDNN eltwise steps computing the element-wise table's unary function `f` with parameters
// alpha and beta, in order (HardSigmoid takes two: linear, then clip to [0, 1]); empty when oneDNN
// cannot express it.
std::vector<EltwiseOp> onednn_eltwise(ops::Elementwise f, float alpha, float beta);
inline std::vector<EltwiseOp> onednn_eltwise(const ops::Activation& a) { return onednn_eltwise(a.function, a.alpha, a.beta); }
// oneDNN's binary algorithm for the table's binary function `f` (Add, Sub, Mul, Div, Max, Min).
std::optional<dnnl::algorithm> onednn_binary(ops::Elementwise f);

// Declines a fused activation oneDNN has no post-op for.
Capability epilogue_supported(const ir::Node& node);

// Post-ops for the node's residual and activation, after `first` (an int8 product's input scale),
// then for a uint8 output (a value kept uint8 between int8 products) its quantization: x / scale +
// zero point, which the primitive rounds (half to even) and saturates as it writes uint8.
dnnl::primitive_attr epilogue_attr(const ir::Node& node, dnnl::post_ops first = {});

// Copies the residual into the output before the primitive adds the product to it.
Status prepare_residual(ops::KernelContext& ctx);

}  // namespace kiln::providers::cpu
