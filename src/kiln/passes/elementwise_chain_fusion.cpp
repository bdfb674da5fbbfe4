// elementwise_chain_fusion: runs of element-wise ops -> kiln.ElementwiseChain.
#include "kiln/passes/elementwise_chain_fusion.h"

#include <algorithm>
#include <set>

#include "kiln/ops/elementwise_chain.h"
#include "kiln/passes/rewrite_helpers.h"

namespace kiln::passes {
namespace {

struct Link {
  ir::Node* node;
  ops::ChainStep step;
};

bool is_float_tensor(const ir::Value* v) {
  const DType t = v->type.dtype;
  return v->type.is_tensor() && (t == DType::kFloat || t == DType::kDouble || t == DType::kFloat16 || t == DType::kBFloat16);
}

// The node's own step on its first float input, if it can start a chain.
std::optional<Link> first_link(ir::Node& node, const PassContext& ctx) {
  if (!ctx.owns(node)) return std::nullopt;
  for (ir::Value* in : node.inputs) {
    if (!in || !is_float_tensor(in)) continue;
    if (std::optional<ops::ChainStep> step = ops::chain_step_of(node, in)) return Link{&node, *step};
  }
  return std::nullopt;
}

// The next link: the sole reader of `node`'s output, when it is a step on it.
std::optional<Link> next_link(const ir::Graph& graph, const ir::Node& node, const std::set<std::string>& captured,
                              const PassContext& ctx) {
  const ir::Value* y = node.outputs[0];
  if (graph.is_graph_output(y) || captured.count(y->name)) return std::nullopt;
  const std::vector<ir::Node*> readers = graph.consumers(y);
  if (readers.size() != 1 || !ctx.owns(*readers[0])) return std::nullopt;
  if (std::optional<ops::ChainStep> step = ops::chain_step_of(*readers[0], y)) return Link{readers[0], *step};
  return std::nullopt;
}

// The chain's input: the value the first link computes on.
ir::Value* chain_input(const Link& first) {
  const ir::Node& n = *first.node;
  if (!first.step.is_binary()) return n.inputs[0];
  return first.step.operand_first ? n.inputs[1] : n.inputs[0];
}

// The binary link's other operand.
ir::Value* operand_of(const Link& link) { return link.node->inputs[static_cast<size_t>(link.step.operand)]; }

void replace_with_chain(ir::Graph& graph, std::vector<Link>& links) {
  std::vector<ir::Value*> inputs = {chain_input(links.front())};
  std::vector<ops::ChainStep> steps;
  std::vector<std::string> origins;
  for (Link& link : links) {
    if (link.step.is_binary()) {
      ir::Value* operand = operand_of(link);
      auto it = std::find(inputs.begin() + 1, inputs.end(), operand);
      link.step.operand = static_cast<int>(it - inputs.begin());
      if (it == inputs.end()) inputs.push_back(operand);
    }
    steps.push_back(link.step);
    for (const std::string& name : link.node->source_nodes()) origins.push_back(name);
  }
  ir::Value* y = links.back().node->outputs[0];
  const std::string name = links.front().node->name;
  for (const Link& link : links) graph.remove_node(link.node);
  ir::Node* chain = graph.add_node("ElementwiseChain", inputs, {y}, name, "kiln", 1);
  ops::set_chain_steps(*chain, steps);
  chain->origins = origins;
}

}  // namespace

Result<bool> fuse_elementwise_chains(ir::Graph& graph, const PassContext& ctx) {
  if (!ctx.preferences.prefers(ops::GraphForm::kElementwiseChains)) return false;
  const std::set<std::string> captured = names_captured_by_subgraphs(graph);
  std::vector<ir::Node*> order;
  for (const auto& n : graph.nodes()) order.push_back(n.get());
  std::set<const ir::Node*> used;
  bool changed = false;
  for (ir::Node* node : order) {
    if (used.count(node)) continue;
    std::optional<Link> first = first_link(*node, ctx);
    if (!first) continue;
    // Not a chain's start when the node extends the chain of its input's producer.
    const ir::Value* in = chain_input(*first);
    if (in->producer && first_link(*in->producer, ctx) && next_link(graph, *in->producer, captured, ctx)) continue;
    std::vector<Link> links = {*first};
    while (std::optional<Link> next = next_link(graph, *links.back().node, captured, ctx)) links.push_back(*next);
    if (links.size() < 2) continue;
    for (const Link& link : links) used.insert(link.node);
    replace_with_chain(graph, links);
    changed = true;
  }
  return finish_rewrite(graph, changed);
}

}  // namespace kiln::passes
