// The pad policy of shape profiles: each profiled dim of a run's inputs is raised to its bucket
// (the smallest of the profile's min, opt and max that holds it), the inputs zero-padded to those
// shapes, and the outputs cut back along the dims that carry a padded symbol. A model sees at most
// three sizes per profiled symbol, so it compiles at most that many variants. Only sound for dims
// along which the model's outputs do not mix (batch), or whose padding the model masks (a
// sequence with its attention mask padded with zeros); docs/ARCHITECTURE.md.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "kiln/ir/graph.h"
#include "kiln/session.h"
#include "kiln/status.h"
#include "kiln/tensor.h"
#include "kiln/value.h"

namespace kiln::runtime {

struct PaddedRun {
  std::map<std::string, Value> inputs;         // padded copies (inputs needing none as given)
  std::map<std::string, int64_t> symbols;      // symbol -> the run's real size, for each padded symbol
  int64_t real_elements = 0, padded_elements = 0;  // over the padded inputs
};

// `inputs` padded to their buckets. ShapeGuardFailure naming the dim when one exceeds its max.
Result<PaddedRun> pad_to_buckets(const ir::Graph& graph, const std::map<std::string, DimRange>& profile,
                                 const std::map<std::string, Value>& inputs);

// A copy of `t` (not strings) of the same rank and shape `shape`: along each dim its leading
// elements, cut where `shape` is smaller and followed by zeros where it is larger.
Tensor resized_copy(const Tensor& t, const std::vector<int64_t>& shape);

}  // namespace kiln::runtime
