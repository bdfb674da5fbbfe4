// Layout boundaries: the Transposes the channels_last pass puts where a channels-last region meets
// the rest of the graph, which the report counts as layout reorders, and the reorders cpu kernels
// do inside themselves.
#pragma once

#include "kiln/ir/graph.h"

namespace kiln::analysis {

// Whether `node` is a Transpose into or out of a channels-last region of `graph`.
bool is_layout_boundary(const ir::Graph& graph, const ir::Node& node);

// Activation reorders the cpu kernel of `node` does at its edges: 2 for a Winograd convolution
// (input into oneDNN's blocked layout, output back), 0 otherwise.
int kernel_reorders(const ir::Node& node);

}  // namespace kiln::analysis
