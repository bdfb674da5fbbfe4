// Shape and type inference: walks a graph in order, applies every node's registered shape rule,
// propagates small known values (shape arithmetic) and checks declared types against inference.
#pragma once

#include <string>
#include <vector>

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
};

// Sets the type of every node output in `graph` (which must be topologically ordered).
// Errors: UnsupportedOperator for ops without a definition, InvalidModel naming the node when a
// rule rejects its inputs or a declared type contradicts the inferred one.
Result<InferenceEvidence> infer_types(ir::Graph& graph, const ops::OpRegistry& registry);

// Merges a declared type (from the model) with an inferred one; InvalidModel when they contradict.
Result<ir::TensorType> merge_types(const ir::TensorType& declared, const ir::TensorType& inferred,
                                   const std::string& what);

}  // namespace kiln::analysis
