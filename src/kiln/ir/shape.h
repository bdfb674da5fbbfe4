// Dim, Shape and TensorType: the static type of an IR value. A dim is a concrete size, a named
// symbol ("batch") or unknown; a shape may itself be unknown (rank not known).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kiln/tensor.h"

namespace kiln::ir {

class Dim {
 public:
  Dim() = default;  // unknown
  Dim(int64_t value) : value_(value) {}  // NOLINT: a number is a concrete dim
  static Dim symbol(std::string name) {
    Dim d;
    d.symbol_ = std::move(name);
    return d;
  }
  static Dim unknown() { return Dim(); }

  bool is_static() const { return value_ >= 0; }
  bool is_symbol() const { return value_ < 0 && !symbol_.empty(); }
  int64_t value() const { return value_; }  // -1 unless static
  const std::string& symbol_name() const { return symbol_; }
  std::string to_string() const;  // "3", "batch" or "?"
  bool operator==(const Dim& other) const { return value_ == other.value_ && symbol_ == other.symbol_; }

 private:
  int64_t value_ = -1;
  std::string symbol_;
};

class Shape {
 public:
  Shape() = default;
  explicit Shape(std::vector<Dim> dims) : dims_(std::move(dims)) {}
  static Shape from_static(const std::vector<int64_t>& dims);

  size_t rank() const { return dims_.size(); }
  const std::vector<Dim>& dims() const { return dims_; }
  std::vector<Dim>& dims() { return dims_; }
  const Dim& operator[](size_t i) const { return dims_[i]; }
  bool is_static() const;
  // Concrete dims; only meaningful when is_static().
  std::vector<int64_t> static_dims() const;
  std::string to_string() const;  // "[N,3,224,224]"
  bool operator==(const Shape& other) const { return dims_ == other.dims_; }

 private:
  std::vector<Dim> dims_;
};

struct TensorType {
  DType dtype = DType::kUndefined;
  std::optional<Shape> shape;  // nullopt: rank unknown

  bool has_static_shape() const { return shape && shape->is_static(); }
  std::string to_string() const;  // "float[N,3]", "int64[?]" or "float" (unknown rank)
  bool operator==(const TensorType& other) const { return dtype == other.dtype && shape == other.shape; }
};

inline TensorType make_type(DType dtype, const std::vector<int64_t>& dims) {
  return TensorType{dtype, Shape::from_static(dims)};
}

}  // namespace kiln::ir
