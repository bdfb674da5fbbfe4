// Output comparison for the conformance runner: dtype and shape must match; numbers agree when
// |got - want| <= 1e-7 + 1e-3 * |want| (NaN equals NaN); strings must be equal.
#pragma once

#include <optional>
#include <string>

#include "kiln/tensor.h"
#include "kiln/value.h"

namespace kiln::conformance {

// nullopt when `got` matches `want`, else why not ("wrong value at index 3 (got 1.5, want 2)").
std::optional<std::string> compare_tensors(const Tensor& got, const Tensor& want);

// compare_tensors for sequences (same length, element by element) and optionals (both empty, or
// equal elements).
std::optional<std::string> compare_values(const Value& got, const Value& want);

}  // namespace kiln::conformance
