// PassContext: what every graph-rewrite pass may read besides the graph itself: the operator
// registry (for evaluating nodes), the limits the passes respect, and what the session's provider
// prefers on its target (providers::GraphPreferences: the provider says, the passes follow).
#pragma once

#include <cstdint>
#include <functional>

#include "kiln/ir/graph.h"
#include "kiln/ops/activation_layout.h"
#include "kiln/ops/op_registry.h"
#include "kiln/status.h"

namespace kiln::passes {

struct PassContext {
  // Ops that constant folding may evaluate (ops::OpRegistry::global() in the compiler; tests pass
  // a small local registry).
  const ops::OpRegistry& registry;
  // Constant folding leaves a node unfolded when its outputs together would exceed this many bytes.
  int64_t max_folded_bytes = int64_t{64} << 20;
  // The layouts the provider runs convolutions fastest in, best first (the cpu provider: what
  // oneDNN wants on the target, e.g. NCHW16c, NCHW8c, NHWC on AVX-512; NCHW8c, NHWC on AVX2): the
  // activation_layout pass gives each convolution region the first that fits. Empty for cpu_ref,
  // which gains nothing: regions stay channels-first.
  std::vector<ops::ActivationLayout> activation_layouts = {};
  // The provider has Winograd kernels for 3x3 convolutions (the cpu provider where oneDNN has
  // them, on AVX-512): the winograd_selection pass marks the convolutions they take.
  bool winograd = false;
  // The target runs a fused element-wise chain in one pass (the cpu provider): the
  // elementwise_chain_fusion pass builds them. Off for cpu_ref, whose chain kernel is step by step.
  bool elementwise_chains = false;
  // The session's preferred provider has no float16 kernels and computes float16 ops in float32
  // (the cpu provider): the half_in_float pass converts them before partition.
  bool half_in_float = false;
  // Set when the passes lower a partitioned graph for one provider (the three fields above are its
  // preferences): whether that provider runs `node`, or this lowering made it. The
  // provider-specific passes (activation_layout, elementwise_chain_fusion, winograd_selection)
  // rewrite only such nodes. Unset: every node.
  std::function<bool(const ir::Node&)> owned = {};

  bool owns(const ir::Node& node) const { return !owned || owned(node); }
};

// Every pass has this signature: it rewrites the top-level graph (subgraph bodies are left as they
// are, and no value they read by name is removed or renamed) and returns whether it changed anything.
using PassFunction = std::function<Result<bool>(ir::Graph& graph, const PassContext& ctx)>;

}  // namespace kiln::passes
