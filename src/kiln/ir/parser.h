// Reads the IR's text form (what print_graph writes, printer.h) back into a Graph, so that a pass
// can be tested on a few lines of IR:
//   graph main (%x: float[2,N]) -> (%y: float[2,N]) {
//     %half = constant float[] [0.5]
//     %a: float[2,N] = Mul 'scale'(%x, %half)
//     %y = kiln.Gelu 'gelu'(%a) {approximate="tanh"}
//   }
// Beyond what the printer writes: a value's type may be left out (undefined), a constant without
// values is zeros, and a constant's values are all given (the printer writes them for small
// int64 and float constants only); a constant holds at most 2^24 elements. A name no header,
// constant or node defines is a read of the enclosing scope inside a subgraph (a value without
// producer), and an error at the top.
#pragma once

#include <memory>
#include <string_view>

#include "kiln/ir/graph.h"
#include "kiln/status.h"

namespace kiln::ir {

// The graph `text` describes; its nodes get `opset_version`. InvalidArgument naming the line and
// what was expected there.
Result<std::unique_ptr<Graph>> parse_graph(std::string_view text, int opset_version = 17);

}  // namespace kiln::ir
