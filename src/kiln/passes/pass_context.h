// PassContext: what every graph-rewrite pass may read besides the graph itself: the operator
// registry (for evaluating nodes), the limits the passes respect, and what the provider being
// lowered for prefers on its target (ops::GraphPreferences: the provider says, the passes follow).
#pragma once

#include <cstdint>
#include <functional>

#include "kiln/ir/graph.h"
#include "kiln/ops/graph_preferences.h"
#include "kiln/ops/op_registry.h"
#include "kiln/status.h"

namespace kiln::passes {

struct PassContext {
  // Ops that constant folding may evaluate (ops::OpRegistry::global() in the compiler; tests pass
  // a small local registry).
  const ops::OpRegistry& registry;
  // Constant folding leaves a node unfolded when its outputs together would exceed this many bytes.
  int64_t max_folded_bytes = int64_t{64} << 20;
  // The forms the provider prefers, each asked for by the pass that makes it (the cpu provider:
  // element-wise chains, float16 in float32, and, where oneDNN has them on the target, blocked
  // activation layouts such as NCHW16c, NCHW8c, NHWC and Winograd convolutions). Empty for
  // cpu_ref, which gains nothing from them. half_in_float reads the policy's first provider's
  // before partition; the lowering passes, the provider they lower for.
  ops::GraphPreferences preferences = {};
  // Set when the passes lower a partitioned graph for one provider (`preferences` are its):
  // whether that provider runs `node`, or this lowering made it. The
  // provider-specific passes (activation_layout, elementwise_chain_fusion, winograd_selection)
  // rewrite only such nodes. Unset: every node.
  std::function<bool(const ir::Node&)> owned = {};

  bool owns(const ir::Node& node) const { return !owned || owned(node); }
};

// Every pass has this signature: it rewrites the top-level graph (subgraph bodies are left as they
// are, and no value they read by name is removed or renamed) and returns whether it changed anything.
using PassFunction = std::function<Result<bool>(ir::Graph& graph, const PassContext& ctx)>;

}  // namespace kiln::passes
