// Parity checks: how far an output is from a reference (PyTorch's, ONNX Runtime's, a saved run).
// The CLI's --expect and the model parity tests use it; Session::record_parity puts it in the report.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "kiln/tensor.h"
#include "kiln/value.h"

namespace kiln {

struct ParityResult {
  std::string name;
  bool comparable = false;  // same dtype and shape
  std::string mismatch;     // why not comparable
  int64_t elements = 0;
  double max_abs_error = 0;    // +inf where one side is NaN/Inf and the other is not
  double reference_scale = 0;  // max |reference|
  // max_abs_error / max(1, reference_scale): the error relative to the output's scale.
  double relative_error() const { return max_abs_error / std::max(1.0, reference_scale); }
  bool within(double relative_tolerance) const { return comparable && relative_error() <= relative_tolerance; }
};

// Compares two tensors element by element (NaN equals NaN, equal infinities are equal; string
// elements must be equal, a differing one is an infinite error).
ParityResult compare_tensors(const std::string& name, const Tensor& got, const Tensor& reference);

// compare_tensors for any value, one result per tensor compared: a tensor gives one; a sequence
// one per element, named "name[i]" (an empty one a single comparable result of no elements); an
// optional its element's, or a single comparable result of no elements when both are empty. A
// different kind, length or emptiness gives a single result, not comparable, saying so.
std::vector<ParityResult> compare_values(const std::string& name, const Value& got, const Value& reference);

}  // namespace kiln
