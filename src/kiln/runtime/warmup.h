// Warm-up fixtures: the inputs a session runs before it reports ready, and the check of the
// outputs against the ones recorded when the artifact was compiled. An artifact that does not
// reproduce its recorded outputs here (another machine's kernels gone wrong, a bad build) is
// refused before it serves a request.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "kiln/ir/graph.h"
#include "kiln/status.h"
#include "kiln/tensor.h"

namespace kiln::runtime {

// Largest accepted max-abs-error of a warm-up output relative to max(1, max|recorded|).
inline constexpr double kWarmupTolerance = 1e-4;

// Seeded pseudo-random inputs (kiln::random_tensor; input i from seed i + 1) of the given shapes,
// one per graph input. InvalidArgument for string or non-tensor inputs, which cannot be generated.
Result<std::map<std::string, Tensor>> generated_fixture_inputs(const ir::Graph& graph,
                                                               const std::vector<std::vector<int64_t>>& shapes);

struct WarmupCheck {
  double max_relative_error = 0;  // over the outputs
};

// Compares each recorded output with the one the warm-up gave. IntegrityFailure naming the first
// output that is missing or differs beyond kWarmupTolerance, with its error.
Result<WarmupCheck> check_fixture_outputs(const std::map<std::string, Tensor>& recorded,
                                          const std::map<std::string, Tensor>& got);

}  // namespace kiln::runtime
