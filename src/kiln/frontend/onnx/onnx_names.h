// Naming conventions shared by the ONNX import steps: the canonical domain spelling and the name a
// node is known by in messages and in the IR.
#pragma once

#include <onnx/onnx_pb.h>

#include <string>

namespace kiln::frontend {

// "" and "ai.onnx" are the same domain; Kiln spells it "".
inline std::string canonical_domain(const std::string& domain) { return domain == "ai.onnx" ? "" : domain; }

// The node's own name, or "<op_type>_<index>" (its position in its graph) when it has none.
inline std::string node_name(const onnx::NodeProto& node, int index) {
  return node.name().empty() ? node.op_type() + "_" + std::to_string(index) : node.name();
}

}  // namespace kiln::frontend
