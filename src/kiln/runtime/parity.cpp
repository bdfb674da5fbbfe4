// Element-wise parity of an output (a tensor, or the tensors of a sequence or optional) against a
// reference.
#include "kiln/parity.h"

#include <cmath>
#include <limits>

namespace kiln {

namespace {

double element_error(double got, double want) {
  if (std::isnan(got) && std::isnan(want)) return 0;
  if (std::isinf(want) && got == want) return 0;
  if (!std::isfinite(got) || !std::isfinite(want)) return std::numeric_limits<double>::infinity();
  return std::fabs(got - want);
}

}  // namespace

ParityResult compare_tensors(const std::string& name, const Tensor& got, const Tensor& reference) {
  ParityResult r;
  r.name = name;
  if (got.dtype() != reference.dtype()) {
    r.mismatch = std::string("dtype ") + dtype_name(got.dtype()) + " vs reference " + dtype_name(reference.dtype());
    return r;
  }
  if (got.shape() != reference.shape()) {
    r.mismatch = "shape " + shape_to_string(got.shape()) + " vs reference " + shape_to_string(reference.shape());
    return r;
  }
  r.comparable = true;
  r.elements = reference.element_count();
  if (reference.dtype() == DType::kString) {  // equal or not: any differing element is an infinite error
    for (int64_t i = 0; i < r.elements; ++i)
      if (got.data<std::string>()[i] != reference.data<std::string>()[i]) r.max_abs_error = std::numeric_limits<double>::infinity();
    return r;
  }
  for (int64_t i = 0; i < r.elements; ++i) {
    const double want = element_as_double(reference, i);
    r.max_abs_error = std::max(r.max_abs_error, element_error(element_as_double(got, i), want));
    if (std::isfinite(want)) r.reference_scale = std::max(r.reference_scale, std::fabs(want));
  }
  return r;
}

namespace {

// A single result for values that differ in structure, or that hold no tensor to compare.
ParityResult structural(const std::string& name, std::string mismatch) {
  ParityResult r;
  r.name = name;
  r.comparable = mismatch.empty();
  r.mismatch = std::move(mismatch);
  return r;
}

}  // namespace

std::vector<ParityResult> compare_values(const std::string& name, const Value& got, const Value& reference) {
  if (got.kind() != reference.kind()) return {structural(name, got.describe() + " vs reference " + reference.describe())};
  switch (reference.kind()) {
    case Value::Kind::kTensor: return {compare_tensors(name, got.tensor(), reference.tensor())};
    case Value::Kind::kSequence: {
      if (got.elements().size() != reference.elements().size())
        return {structural(name, std::to_string(got.elements().size()) + " elements vs reference " +
                                     std::to_string(reference.elements().size()))};
      if (reference.elements().empty()) return {structural(name, "")};
      std::vector<ParityResult> results;
      for (size_t i = 0; i < reference.elements().size(); ++i)
        results.push_back(compare_tensors(name + "[" + std::to_string(i) + "]", got.elements()[i], reference.elements()[i]));
      return results;
    }
    case Value::Kind::kOptional:
      if (got.has_element() != reference.has_element())
        return {structural(name, got.describe() + " vs reference " + reference.describe())};
      if (!reference.has_element()) return {structural(name, "")};
      return compare_values(name, got.element(), reference.element());
  }
  return {};
}

}  // namespace kiln
