// Graph queries and edits shared by the rewrite passes: which nodes may be evaluated or merged,
// which values subgraphs capture by name, and turning a node into the constants it computes.
#pragma once

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/ir/graph.h"
#include "kiln/status.h"
#include "kiln/tensor.h"

namespace kiln::passes {

// True when the node is the ai.onnx op `op_type`.
bool is_onnx_op(const ir::Node& node, std::string_view op_type);

// Names of this graph's values that subgraphs of its nodes read from the enclosing scope. Passes
// never remove, rename or replace such a value, since subgraphs refer to it by name.
std::set<std::string> names_captured_by_subgraphs(const ir::Graph& graph);

// Same dtype, shape and contents (floats by bits).
bool tensors_equal(const Tensor& a, const Tensor& b);

// The end of a rewrite that added and removed nodes: when `changed`, drops the values nothing uses
// and restores topological order. Returns `changed` (or the cycle error).
Result<bool> finish_rewrite(ir::Graph& graph, bool changed);

// Replaces `node` by constants: output i becomes an initializer holding values[i] (its type taken
// from the tensor; omitted outputs are skipped) and the node is removed. Values keep their names.
void replace_node_with_constants(ir::Graph& graph, const ir::Node* node, std::vector<Tensor> values);

}  // namespace kiln::passes
