// Structural checks of a graph: every value has at most one producer, every node input is defined
// (graph input, constant, earlier node output or outer-scope value), no cycles, constants agree with
// their declared types, graph outputs are defined.
#pragma once

#include "kiln/ir/graph.h"
#include "kiln/status.h"

namespace kiln::ir {

// InvalidModel naming the node and value at fault. Assumes nothing about node order beyond what it checks.
Status verify(const Graph& graph);

}  // namespace kiln::ir
