// Puts the nodes of a GraphProto (and of its subgraphs) into execution order. ONNX requires sorted
// node lists and its checker refuses others, but real exporters and hand edits produce unsorted
// files that are otherwise valid; Kiln accepts them.
#pragma once

#include <onnx/onnx_pb.h>

namespace kiln::frontend {

// Stable topological sort: already sorted graphs keep their order. A node depends on the nodes
// producing its inputs and the values its subgraphs read from enclosing scopes. A graph with a
// cycle is left as it is, for the graph verifier to report.
void sort_nodes(onnx::GraphProto& graph);

}  // namespace kiln::frontend
