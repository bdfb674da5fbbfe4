// Element-wise comparison through double, which holds every value of the ONNX numeric types
// closely enough for a relative tolerance of 1e-3.
#include "tensor_compare.h"

#include <cmath>
#include <cstdio>
#include <vector>


namespace kiln::conformance {

namespace {

// Element i of a numeric tensor; complex tensors are read as (real, imaginary) pairs of scalars.
double scalar_at(const Tensor& t, int64_t i) {
  if (t.dtype() == DType::kComplex64) return t.data<float>()[i];
  if (t.dtype() == DType::kComplex128) return t.data<double>()[i];
  return element_as_double(t, i);
}

bool close_enough(double got, double want) {
  if (std::isnan(got) || std::isnan(want)) return std::isnan(got) && std::isnan(want);
  if (got == want) return true;  // also equal infinities
  return std::fabs(got - want) <= 1e-7 + 1e-3 * std::fabs(want);
}

std::string number(double v) {
  char buf[40];
  std::snprintf(buf, sizeof(buf), "%.9g", v);
  return buf;
}

std::string wrong_value(int64_t i, const std::string& got, const std::string& want) {
  return "wrong value at index " + std::to_string(i) + " (got " + got + ", want " + want + ")";
}

}  // namespace

std::optional<std::string> compare_tensors(const Tensor& got, const Tensor& want) {
  if (got.dtype() != want.dtype())
    return std::string("dtype mismatch (got ") + dtype_name(got.dtype()) + ", want " + dtype_name(want.dtype()) + ")";
  if (got.shape() != want.shape())
    return "shape mismatch (got " + shape_to_string(got.shape()) + ", want " + shape_to_string(want.shape()) + ")";
  const int64_t n = want.element_count();
  if (want.dtype() == DType::kString) {
    for (int64_t i = 0; i < n; ++i)
      if (got.data<std::string>()[i] != want.data<std::string>()[i])
        return wrong_value(i, "\"" + got.data<std::string>()[i] + "\"", "\"" + want.data<std::string>()[i] + "\"");
    return std::nullopt;
  }
  const bool complex = want.dtype() == DType::kComplex64 || want.dtype() == DType::kComplex128;
  const int64_t scalars = complex ? 2 * n : n;
  for (int64_t i = 0; i < scalars; ++i) {
    const double g = scalar_at(got, i), w = scalar_at(want, i);
    if (!close_enough(g, w)) return wrong_value(complex ? i / 2 : i, number(g), number(w));
  }
  return std::nullopt;
}

std::optional<std::string> compare_values(const Value& got, const Value& want) {
  if (got.kind() != want.kind()) return "got a " + got.describe() + ", want a " + want.describe();
  switch (want.kind()) {
    case Value::Kind::kTensor: return compare_tensors(got.tensor(), want.tensor());
    case Value::Kind::kSequence: {
      if (got.elements().size() != want.elements().size())
        return "sequence has " + std::to_string(got.elements().size()) + " elements, want " +
               std::to_string(want.elements().size());
      for (size_t i = 0; i < want.elements().size(); ++i)
        if (auto diff = compare_tensors(got.elements()[i], want.elements()[i]))
          return "element " + std::to_string(i) + ": " + *diff;
      return std::nullopt;
    }
    case Value::Kind::kOptional:
      if (got.has_element() != want.has_element())
        return std::string("optional is ") + (got.has_element() ? "full" : "empty") + ", want " +
               (want.has_element() ? "full" : "empty");
      return got.has_element() ? compare_values(got.element(), want.element()) : std::nullopt;
  }
  return std::nullopt;
}

}  // namespace kiln::conformance
