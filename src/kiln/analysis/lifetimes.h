// Value lifetimes over a linear schedule: the step that produces each intermediate value and the
// last step that reads it. The memory planner turns these into arena offsets.
#pragma once

#include <cstdint>
#include <vector>

#include "kiln/ir/graph.h"

namespace kiln::analysis {

struct Lifetime {
  const ir::Value* value = nullptr;
  int64_t first_step = 0;  // index of the producing node
  int64_t last_step = 0;   // index of the last node that reads it (== first_step when unread)
};

// Lifetimes of every value produced by a node of `graph` (in its node order), except graph outputs.
std::vector<Lifetime> compute_lifetimes(const ir::Graph& graph);

}  // namespace kiln::analysis
