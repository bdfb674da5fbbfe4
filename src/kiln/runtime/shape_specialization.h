// Shape specialisation: a session compiled for fixed input shapes. The graph inputs' symbolic dims
// become constants before analysis, so every pass sees a static graph; runs are then guarded so
// that only those shapes reach the plan.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "kiln/ir/graph.h"
#include "kiln/status.h"
#include "kiln/value.h"

namespace kiln::runtime {

// The fixed shape of each tensor input, by name.
using SpecializedShapes = std::map<std::string, std::vector<int64_t>>;

// Replaces the dims of each tensor input of `graph` by `shapes` (one per graph input, in order, as
// load_time_shapes() gives them; empty for sequences and optionals) and returns them by name.
SpecializedShapes pin_input_shapes(ir::Graph& graph, const std::vector<std::vector<int64_t>>& shapes);

// ShapeGuardFailure naming the input and dim when a tensor input of the model's rank has another
// shape than the session was specialised to; other mistakes are left to bind_inputs().
Status check_specialized_shapes(const SpecializedShapes& fixed, const std::map<std::string, Value>& inputs);

}  // namespace kiln::runtime
