// Layout boundaries: the reorders the activation_layout pass puts where a convolution region meets
// the rest of the graph (kiln.Relayout, and Transposes next to NHWC nodes), which the report
// counts as layout reorders.
#pragma once

#include "kiln/ir/graph.h"

namespace kiln::analysis {

// Whether `node` is a kiln.Relayout, or a Transpose into or out of a region of layout-aware nodes.
bool is_layout_boundary(const ir::Graph& graph, const ir::Node& node);

}  // namespace kiln::analysis
