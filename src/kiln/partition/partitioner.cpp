// Capability-driven partitioning under a fallback policy.
#include "kiln/analysis/flops.h"
#include "kiln/analysis/layout_boundary.h"
#include "kiln/partition/partitioner.h"

#include <map>

namespace kiln::partition {

namespace {

const providers::Provider* find_provider(const ProviderList& available, const std::string& name) {
  for (const auto& p : available)
    if (p->name() == name) return p.get();
  return nullptr;
}

std::string reasons_text(const std::vector<Decline>& declined) {
  std::string s;
  for (const Decline& d : declined) s += (s.empty() ? "" : "; ") + d.provider + ": " + d.reason;
  return s;
}

// Tries the preferred providers, then allowed fallbacks; fills `a` or returns the refusal.
Status place_node(const ir::Node& node, const FallbackPolicy& policy, const ProviderList& available, Assignment& a) {
  for (const std::string& name : policy.preferred) {
    const providers::Provider* p = find_provider(available, name);
    providers::Capability cap = p->supports(node);
    if (cap.supported || cap.deferred) {
      a.provider = name;
      if (cap.deferred) a.deferred = cap.reason;
      return Status::ok();
    }
    a.declined.push_back({name, cap.reason});
  }
  for (const std::string& name : policy.allowed_fallback) {
    const providers::Provider* p = find_provider(available, name);
    providers::Capability cap = p->supports(node);
    if (cap.supported || cap.deferred) {
      a.provider = name;
      a.fallback = true;
      if (cap.deferred) a.deferred = cap.reason;
      return Status::ok();
    }
    a.declined.push_back({name, cap.reason});
  }
  std::string hint;
  for (const auto& p : available) {
    if (!policy.allows_fallback_to(p->name()) && p->supports(node).supported) {
      hint = " (provider " + p->name() + " could run it: pass --allow-fallback " + p->name() + ")";
      break;
    }
  }
  return unsupported_operator(node.describe() + " cannot be placed under policy " + policy.describe() + ": " +
                              reasons_text(a.declined) + hint);
}

void summarise(const ir::Graph& graph, PartitionMap& map) {
  std::map<const ir::Node*, std::string> provider_of;
  for (size_t i = 0; i < map.assignments.size(); ++i) {
    const Assignment& a = map.assignments[i];
    provider_of[a.node] = a.provider;
    if (a.fallback) ++map.fallback_nodes;
    map.total_flops += a.flops;
    if (a.fallback) map.fallback_flops += a.flops;
    if (analysis::is_layout_boundary(graph, *a.node)) ++map.layout_boundaries;
    if (map.partitions.empty() || map.partitions.back().provider != a.provider)
      map.partitions.push_back({a.provider, static_cast<int64_t>(i), 0});
    ++map.partitions.back().node_count;
  }
  for (const auto& node : graph.nodes()) {
    for (const ir::Value* in : node->inputs) {
      if (in && in->producer && provider_of.count(in->producer) &&
          provider_of[in->producer] != provider_of[node.get()])
        ++map.boundary_edges;
    }
  }
}

}  // namespace

Result<PartitionMap> partition_graph(const ir::Graph& graph, const FallbackPolicy& policy,
                                     const ProviderList& available) {
  for (const auto* names : {&policy.preferred, &policy.allowed_fallback})
    for (const std::string& name : *names)
      if (!find_provider(available, name))
        return invalid_argument("fallback policy names provider '" + name + "', which is not loaded");
  if (policy.preferred.empty()) return invalid_argument("fallback policy names no preferred provider");
  PartitionMap map;
  map.policy = policy.describe();
  map.placement = policy;
  for (const auto& node : graph.nodes()) {
    // A control-flow node's bodies are placed under the same policy first: a body node no
    // provider may run refuses the whole node, naming it.
    Status bodies = Status::ok();
    ir::for_each_subgraph(*node, [&](ir::Graph& body) {
      if (!bodies.is_ok()) return;
      Result<PartitionMap> placed = partition_graph(body, policy, available);
      if (!placed.is_ok()) {
        bodies = placed.status().with_context(node->describe() + " subgraph '" + body.name() + "'");
        return;
      }
      for (Assignment& a : placed.value().assignments) map.body_assignments.push_back(std::move(a));
      for (Assignment& a : placed.value().body_assignments) map.body_assignments.push_back(std::move(a));
    });
    KILN_RETURN_IF_ERROR(bodies);
    Assignment a;
    a.node = node.get();
    a.node_name = node->name;
    a.op_type = node->op_type;
    a.flops = analysis::estimate_flops(*node);
    KILN_RETURN_IF_ERROR(place_node(*node, policy, available, a));
    map.assignments.push_back(std::move(a));
  }
  summarise(graph, map);
  return map;
}

}  // namespace kiln::partition
