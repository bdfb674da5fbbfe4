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

std::string TensorType::to_string() const {
  std::string s = dtype_name(dtype);
  if (shape) s += shape->to_string();
  return s;
}

}  // namespace kiln::ir
