// Dim, Shape and TensorType: the static type of an IR value. A dim is a concrete size, a named
// symbol ("batch") or unknown; a shape may itself be unknown (rank not known).
#pragma once

#include <cstdint>
#include <memory>
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

// The type of a value: a tensor (dtype + shape), or a sequence or optional of an element type.
struct TensorType {
  enum class Kind { kTensor, kSequence, kOptional };

  TensorType() = default;
  TensorType(DType tensor_dtype, std::optional<Shape> tensor_shape = std::nullopt)  // NOLINT: implicit from a dtype
      : dtype(tensor_dtype), shape(std::move(tensor_shape)) {}

  DType dtype = DType::kUndefined;  // tensors only
  std::optional<Shape> shape;       // tensors only; nullopt: rank unknown
  Kind kind = Kind::kTensor;
  std::shared_ptr<const TensorType> element;  // sequences and optionals

  static TensorType sequence_of(TensorType element_type);
  static TensorType optional_of(TensorType element_type);

  bool is_tensor() const { return kind == Kind::kTensor; }
  // A tensor with a dtype, or a container whose element type is known.
  bool is_known() const { return is_tensor() ? dtype != DType::kUndefined : element != nullptr; }
  bool has_static_shape() const { return is_tensor() && shape && shape->is_static(); }
  // "float[N,3]", "int64[?]", "float" (unknown rank), "seq(float[2])", "optional(seq(int64))".
  std::string to_string() const;
  bool operator==(const TensorType& other) const;
  bool operator!=(const TensorType& other) const { return !(*this == other); }
};

inline TensorType make_type(DType dtype, const std::vector<int64_t>& dims) {
  return TensorType{dtype, Shape::from_static(dims)};
}

// The type covering a value of either tensor type (an If's two branches; a loop-carried value
// before and after an iteration): `a`'s dtype, else `b`'s; the dims they agree on, the others
// unknown; rank unknown where their ranks differ. Containers: `a`.
TensorType unite(const TensorType& a, const TensorType& b);

}  // namespace kiln::ir
