// Shape and type inference: walks a graph in order, applies every node's registered shape rule,
// propagates small known values (shape arithmetic) and reconciles declared types with inference
// (declared_types.h: a contradicted declared shape gives way and is recorded).
#pragma once

#include <string>
#include <vector>

#include "kiln/analysis/declared_types.h"
#include "kiln/ir/graph.h"
#include "kiln/ops/op_registry.h"
#include "kiln/status.h"

namespace kiln::analysis {

struct InferenceEvidence {
  int64_t nodes = 0;
  int64_t values_with_static_shape = 0;
  int64_t values_with_symbolic_shape = 0;  // shape known up to symbolic/unknown dims
  int64_t values_without_shape = 0;        // rank unknown
  int64_t values_propagated = 0;           // outputs whose value became known (shape arithmetic)
  std::vector<std::string> symbols;        // distinct dim symbols seen
  std::vector<std::string> unresolved;     // "name: type" of values whose shape is not static (first 50)
  // Declared shapes inference contradicted (value_info, subgraph inputs and outputs, graph
  // outputs, loop-carried values whose size changes per iteration): what analysis used instead.
  std::vector<DeclarationDisagreement> declaration_disagreements;
};

// Sets the type of every node output in `graph` (which must be topologically ordered), and of
// Loop bodies' carried inputs: the type each enters with, its dims that change from one iteration
// to the next made unknown. Errors: UnsupportedOperator for ops without a definition, InvalidModel
// naming the node when a rule rejects its inputs, a declared element type contradicts the inferred
// one, or a loop-carried value changes element type.
Result<InferenceEvidence> infer_types(ir::Graph& graph, const ops::OpRegistry& registry);

}  // namespace kiln::analysis
