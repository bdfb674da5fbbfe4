// Layout boundaries: kiln.Relayout, and Transposes next to nodes that work in another layout.
#include "kiln/analysis/layout_boundary.h"

namespace kiln::analysis {
namespace {


bool works_in_other_layout(const ir::Node& n) {
  return ((n.is("kiln", "FusedConv") || n.is("kiln", "ChannelShuffle")) && n.attr_string("layout", "NCHW") != "NCHW") ||
         n.is("kiln", "InLayout");
}

}  // namespace

bool is_layout_boundary(const ir::Graph& graph, const ir::Node& node) {
  if (node.is("kiln", "Relayout")) return true;
  if (!node.is("", "Transpose") || node.inputs.empty() || !node.inputs[0] || node.outputs.empty()) return false;
  const ir::Node* producer = node.inputs[0]->producer;
  if (producer && works_in_other_layout(*producer)) return true;
  for (const ir::Node* reader : graph.consumers(node.outputs[0]))
    if (works_in_other_layout(*reader)) return true;
  return false;
}

}  // namespace kiln::analysis
