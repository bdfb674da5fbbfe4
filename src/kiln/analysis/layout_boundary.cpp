// Layout boundaries: Transposes next to channels-last nodes.
#include "kiln/analysis/layout_boundary.h"

namespace kiln::analysis {
namespace {

bool is_op(const ir::Node& n, const char* domain, const char* op) { return n.domain == domain && n.op_type == op; }

bool is_channels_last_node(const ir::Node& n) {
  return (is_op(n, "kiln", "FusedConv") && n.attr_string("layout", "NCHW") == "NHWC") || is_op(n, "kiln", "ChannelsLast");
}

}  // namespace

bool is_layout_boundary(const ir::Graph& graph, const ir::Node& node) {
  if (!is_op(node, "", "Transpose") || node.inputs.empty() || !node.inputs[0] || node.outputs.empty()) return false;
  const ir::Node* producer = node.inputs[0]->producer;
  if (producer && is_channels_last_node(*producer)) return true;
  for (const ir::Node* reader : graph.consumers(node.outputs[0]))
    if (is_channels_last_node(*reader)) return true;
  return false;
}

}  // namespace kiln::analysis
