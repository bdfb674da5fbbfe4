// Concat in place: Concats whose inputs are written straight into their output's buffer. Along an
// axis with only 1s before it (a channel concat of a batch of one, channels-first or blocked), each
// input is one contiguous byte range of the output: the plan puts each input there, its producer
// writes it in place, and the Concat has nothing left to copy. Placements chain: a Concat's output
// that is itself an input of a later Concat in place sits inside that Concat's buffer, so all the
// Concats of a DenseNet block (each concatenating every earlier feature map) share one buffer and
// none of them copies.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <set>

#include "kiln/ir/graph.h"

namespace kiln::runtime {

struct InPlaceConcats {
  struct Place {
    const ir::Value* root = nullptr;  // the value that owns the buffer (never itself placed)
    int64_t byte_offset = 0;          // where the placed value starts in the root's buffer
  };
  std::map<const ir::Value*, Place> places;   // values that live inside another value's buffer
  std::set<const ir::Value*> roots;           // values whose buffer holds placed values
  std::set<const ir::Node*> elided;           // Concats whose inputs all sit in their output already
};

// Places the Concats of `graph` (its own nodes, not subgraphs') whose output and inputs can all
// share one buffer; a Concat that cannot be placed whole is left to copy. `can_share(v)`: whether v
// may hold or live inside another value's buffer (an arena value of static shape that no kernel
// overwrites in place). Every piece starts at a multiple of `alignment` bytes.
InPlaceConcats place_concats_in_place(const ir::Graph& graph, const std::function<bool(const ir::Value*)>& can_share,
                                      int64_t alignment);

}  // namespace kiln::runtime
