// Rejects, before ONNX's checker runs, nodes whose domain or operator neither Kiln nor ONNX knows,
// so that such models fail as UnsupportedOperator rather than as a generic checker error.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <map>
#include <string>

#include "kiln/status.h"

namespace kiln::frontend {

// Scans every node of `graph` and of its subgraphs. UnsupportedOperator naming the domain, the op
// and the node when the node's domain is not in `opset_imports` (canonical domains) or unknown to
// both registries, or when neither registry knows the op.
Status check_operators_known(const onnx::GraphProto& graph, const std::map<std::string, int64_t>& opset_imports);

}  // namespace kiln::frontend
