// Layout boundaries: kiln.Relayout, and Transposes next to nodes that work in another layout.
#include "kiln/analysis/layout_boundary.h"

namespace kiln::analysis {
namespace {

bool is_op(const ir::Node& n, const char* domain, const char* op) { return n.domain == domain && n.op_type == op; }

bool works_in_other_layout(const ir::Node& n) {
  return ((is_op(n, "kiln", "FusedConv") || is_op(n, "kiln", "ChannelShuffle")) && n.attr_string("layout", "NCHW") != "NCHW") ||
         is_op(n, "kiln", "InLayout");
}

}  // namespace

bool is_layout_boundary(const ir::Graph& graph, const ir::Node& node) {
  if (is_op(node, "kiln", "Relayout")) return true;
  if (!is_op(node, "", "Transpose") || node.inputs.empty() || !node.inputs[0] || node.outputs.empty()) return false;
  const ir::Node* producer = node.inputs[0]->producer;
  if (producer && works_in_other_layout(*producer)) return true;
  for (const ir::Node* reader : graph.consumers(node.outputs[0]))
    if (works_in_other_layout(*reader)) return true;
  return false;
}

}  // namespace kiln::analysis
