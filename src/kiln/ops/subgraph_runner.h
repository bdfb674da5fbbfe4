// Runs a subgraph (an If branch, a Loop or Scan body) eagerly with the reference kernels: the
// control-flow kernels call it once per branch or iteration.
#pragma once

#include <vector>

#include "kiln/ir/graph.h"
#include "kiln/ops/op_registry.h"
#include "kiln/status.h"

namespace kiln::ops {

// Binds `inputs` to body.inputs by position, reads names the body does not define from `scope`,
// runs the body's nodes in order and returns its outputs. Errors name the failing node.
Result<std::vector<Value>> run_subgraph(const ir::Graph& body, const std::vector<Value>& inputs,
                                        const ValueScope& scope);

// `v` with its own storage: tensors that view memory owned elsewhere (an arena) are copied.
Value owned(const Value& v);

// The graph held by attribute `key` of the node; InvalidModel naming the node when absent.
Result<const ir::Graph*> subgraph_attribute(const ir::Node& node, const std::string& key);

}  // namespace kiln::ops
