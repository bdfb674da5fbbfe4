// Partitioner: places every node on a provider by asking each provider's capability query, in the
// policy's order, then the allowed fallback providers. The result is data (PartitionMap) that the
// report prints: node -> provider, every decline with its reason, the partitions and boundaries.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "kiln/ir/graph.h"
#include "kiln/partition/fallback_policy.h"
#include "kiln/providers/provider.h"
#include "kiln/status.h"

namespace kiln::partition {

struct Decline {
  std::string provider;
  std::string reason;
};

struct Assignment {
  const ir::Node* node = nullptr;
  std::string node_name;
  std::string op_type;
  std::string provider;
  bool fallback = false;          // placed on an allowed fallback provider
  int64_t flops = 0;              // analysis::estimate_flops
  std::vector<Decline> declined;  // providers asked before this one, with their reasons
  // Placed before analysis knew its shapes (Capability::deferred), with the provider's reason: the
  // plan asks again at its shapes, and re-places it by the policy (a late decline) if declined.
  std::string deferred;
};

// A maximal run of consecutive (in schedule order) nodes on one provider.
struct Partition {
  std::string provider;
  int64_t first_node = 0;
  int64_t node_count = 0;
};

struct PartitionMap {
  std::string policy;
  FallbackPolicy placement;  // the policy itself: a plan may re-place a node by it (late declines)
  std::vector<Assignment> assignments;  // one per node, in graph order
  // The nodes of control-flow bodies (at any depth), placed under the same policy; a body runs on
  // them when a fast provider holds its control-flow node (runtime/body_plans.h).
  std::vector<Assignment> body_assignments;
  std::vector<Partition> partitions;
  int64_t fallback_nodes = 0;
  int64_t boundary_edges = 0;  // values produced on one provider and read on another
  int64_t total_flops = 0, fallback_flops = 0;
  int64_t layout_boundaries = 0;  // Transposes into or out of channels-last regions
  // Nodes whose provider declined them only when their plan's kernel was built (no vector kernel
  // for the concrete shapes: UnsupportedTarget), and the provider the policy gave them then.
  struct LateDecline {
    std::string node, op_type, provider, reason, placed_on;
  };
  std::vector<LateDecline> late_declines;

  double fallback_share() const {
    return assignments.empty() ? 0.0 : static_cast<double>(fallback_nodes) / static_cast<double>(assignments.size());
  }
  double fallback_flops_share() const {
    return total_flops == 0 ? 0.0 : static_cast<double>(fallback_flops) / static_cast<double>(total_flops);
  }
};

using ProviderList = std::vector<std::shared_ptr<const providers::Provider>>;

// Places the nodes of `graph`. `available` must hold every provider the policy names.
// UnsupportedOperator (naming the node, op and every provider's reason) when a node has no home
// under the policy; the message says which --allow-fallback would place it, if any would.
Result<PartitionMap> partition_graph(const ir::Graph& graph, const FallbackPolicy& policy,
                                     const ProviderList& available);

}  // namespace kiln::partition
