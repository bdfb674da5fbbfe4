// Dim, Shape and TensorType helpers.
#include "kiln/ir/shape.h"

namespace kiln::ir {

std::string Dim::to_string() const {
  if (is_static()) return std::to_string(value_);
  if (is_symbol()) return symbol_;
  return "?";
}

Shape Shape::from_static(const std::vector<int64_t>& dims) {
  std::vector<Dim> out;
  out.reserve(dims.size());
  for (int64_t d : dims) out.emplace_back(d);
  return Shape(std::move(out));
}

bool Shape::is_static() const {
  for (const Dim& d : dims_)
    if (!d.is_static()) return false;
  return true;
}

std::vector<int64_t> Shape::static_dims() const {
  std::vector<int64_t> out;
  out.reserve(dims_.size());
  for (const Dim& d : dims_) out.push_back(d.value());
  return out;
}

std::string Shape::to_string() const {
  std::string s = "[";
  for (size_t i = 0; i < dims_.size(); ++i) {
    if (i) s += ",";
    s += dims_[i].to_string();
  }
  return s + "]";
}

TensorType TensorType::sequence_of(TensorType element_type) {
  TensorType t;
  t.kind = Kind::kSequence;
  t.element = std::make_shared<const TensorType>(std::move(element_type));
  return t;
}

TensorType TensorType::optional_of(TensorType element_type) {
  TensorType t;
  t.kind = Kind::kOptional;
  t.element = std::make_shared<const TensorType>(std::move(element_type));
  return t;
}

std::string TensorType::to_string() const {
  if (!is_tensor()) {
    const std::string inner = element ? element->to_string() : "?";
    return (kind == Kind::kSequence ? "seq(" : "optional(") + inner + ")";
  }
  std::string s = dtype_name(dtype);
  if (shape) s += shape->to_string();
  return s;
}

bool TensorType::operator==(const TensorType& other) const {
  if (kind != other.kind || dtype != other.dtype || shape != other.shape) return false;
  if (!element || !other.element) return element == other.element;
  return *element == *other.element;
}

TensorType unite(const TensorType& a, const TensorType& b) {
  if (!a.is_tensor() || !b.is_tensor()) return a;
  TensorType united = a;
  if (united.dtype == DType::kUndefined) united.dtype = b.dtype;
  if (a.shape == b.shape) return united;
  if (!a.shape || !b.shape || a.shape->rank() != b.shape->rank()) {
    united.shape.reset();
    return united;
  }
  for (size_t d = 0; d < a.shape->rank(); ++d)
    if (!((*a.shape)[d] == (*b.shape)[d])) united.shape->dims()[d] = Dim::unknown();
  return united;
}

}  // namespace kiln::ir
