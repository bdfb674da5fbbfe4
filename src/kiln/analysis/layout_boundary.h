// Layout boundaries: the Transposes the channels_last pass puts where a channels-last region meets
// the rest of the graph, which the report counts as layout reorders.
#pragma once

#include "kiln/ir/graph.h"

namespace kiln::analysis {

// Whether `node` is a Transpose into or out of a channels-last region of `graph`.
bool is_layout_boundary(const ir::Graph& graph, const ir::Node& node);

}  // namespace kiln::analysis
