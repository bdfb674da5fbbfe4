// Readable text form of a graph, used by `kiln inspect --ir`, pass tests and error messages.
#pragma once

#include <string>

#include "kiln/ir/graph.h"

namespace kiln::ir {

// graph main (%x: float[N,3]) -> (%y: float[N,4]) {
//   %w = constant float[4,3]
//   %y: float[N,4] = Gemm 'fc'(%x, %w) {transB=1}
// }
std::string print_graph(const Graph& graph, int indent = 0);
std::string print_node(const Node& node, int indent = 0);
std::string print_attribute(const Attribute& attr, int indent = 0);

}  // namespace kiln::ir
