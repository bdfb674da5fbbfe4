// The artifact's plan section: the optimised graph (values with their types, nodes with their
// attributes and origins, graph inputs and outputs, opset imports) as FlatBuffers (plan.fbs), and
// back. Constants refer to the weights by their index in the manifest's weight list.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/ir/graph.h"
#include "kiln/status.h"
#include "kiln/tensor.h"

namespace kiln::artifact {

// The compile's precision choices the plan keeps for the control-flow bodies compiled at load
// (compiler::PrecisionOptions): its preference as written ("int8+bf16"; empty: none recorded) and
// the source nodes kept fp32.
struct PlanPrecision {
  std::string preference;
  std::vector<std::string> kept_fp32_sources, fallback_fp32_sources;
};

// `weight_index` gives each constant value's index in the weight list. UnsupportedOperator for
// what this format version cannot store (subgraphs, sequence or optional values, tensor lists and
// type attributes, string tensors).
Result<std::string> encode_plan(const ir::Model& model, const std::map<std::string, int>& weight_index, const PlanPrecision& precision);

// The model the plan describes, its constants taken from `weights` (by index), and its precision
// choices into `precision`. IntegrityFailure when the plan is malformed or refers to what is not there.
Result<ir::Model> decode_plan(std::string_view bytes, const std::vector<Tensor>& weights, PlanPrecision& precision);

}  // namespace kiln::artifact
