// The epilogue of kiln.FusedConv and kiln.FusedMatMul on oneDNN: the residual Z as a sum post-op
// (the output first receives a copy of Z; a binary-add post-op is far slower in oneDNN's
// GEMM-based kernels) and the activation as an eltwise post-op.
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

// The oneDNN eltwise algorithm and its alpha/beta for an activation; nullopt when none fits.
struct EltwiseOp {
  dnnl::algorithm algorithm;
  float alpha = 0, beta = 0;
};
std::optional<EltwiseOp> eltwise_for(const ops::Activation& activation);
// The eltwise post-ops computing an activation, in order: eltwise_for's one, or two for
// HardSigmoid (linear, then clip to [0, 1]); empty when oneDNN cannot express it.
std::vector<EltwiseOp> eltwise_post_ops_for(const ops::Activation& activation);
// The same for the unary math ops Exp, Log, Sqrt, Abs, Neg, Softplus, Reciprocal and Round.
std::optional<EltwiseOp> eltwise_for_math(const std::string& op);

// Declines a fused activation oneDNN has no post-op for.
Capability epilogue_supported(const ir::Node& node);

// Post-ops for the node's residual and activation.
dnnl::primitive_attr epilogue_attr(const ir::Node& node);

// Copies the residual into the output before the primitive adds the product to it.
Status prepare_residual(ops::KernelContext& ctx);

}  // namespace kiln::providers::cpu
