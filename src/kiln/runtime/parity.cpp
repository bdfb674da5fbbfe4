// Element-wise parity of an output against a reference.
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

}  // namespace kiln
