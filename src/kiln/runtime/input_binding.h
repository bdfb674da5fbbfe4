// Checks the caller's named input tensors against the model's inputs (names, dtypes, ranks,
// concrete dims, consistent symbolic dims) and orders them as the graph lists its inputs.
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

// InvalidArgument naming the input at fault.
Result<std::vector<Value>> bind_inputs(const ir::Graph& graph, const std::map<std::string, Value>& inputs);

// The input shapes to plan for at load time: `given` where named, the declared shape otherwise,
// with symbolic dims set to their `symbol_values` entry, else 1. InvalidArgument for unknown
// names, contradicting shapes, unknown ranks.
Result<std::vector<std::vector<int64_t>>> load_time_shapes(const ir::Graph& graph,
                                                           const std::map<std::string, std::vector<int64_t>>& given,
                                                           const std::map<std::string, int64_t>& symbol_values = {});
// A set of inputs a session is measured on (SessionOptions::validation_inputs): bind_inputs'
// checks, every graph input given, and no floating-point input all NaN; InvalidArgument naming the
// set's source and the input.
Status check_input_set(const ir::Graph& graph, const InputSet& set);

// Whether load_time_shapes guesses a dim: some tensor input's dim is symbolic or unknown and
// neither `given` nor `symbol_values` fixes it (it is planned as 1, which the model may not take).
bool has_guessed_dims(const ir::Graph& graph, const std::map<std::string, std::vector<int64_t>>& given,
                      const std::map<std::string, int64_t>& symbol_values);

}  // namespace kiln::runtime
