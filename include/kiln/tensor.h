// kiln::Tensor: a dense, row-major n-d array of one ONNX element type, owning its storage or
// viewing memory owned elsewhere (an arena slot, a caller's buffer). Copying a Tensor shares storage;
// clone() makes a deep, owning copy. Not thread-safe for concurrent writes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace kiln {

// Element types; the numbers are ONNX TensorProto.DataType codes.
enum class DType : int32_t {
  kUndefined = 0,
  kFloat = 1,
  kUInt8 = 2,
  kInt8 = 3,
  kUInt16 = 4,
  kInt16 = 5,
  kInt32 = 6,
  kInt64 = 7,
  kString = 8,
  kBool = 9,
  kFloat16 = 10,
  kDouble = 11,
  kUInt32 = 12,
  kUInt64 = 13,
  kComplex64 = 14,
  kComplex128 = 15,
  kBFloat16 = 16,
  kFloat8E4M3FN = 17,
  kFloat8E4M3FNUZ = 18,
  kFloat8E5M2 = 19,
  kFloat8E5M2FNUZ = 20,
  kUInt4 = 21,
  kInt4 = 22,
};

// Bytes per element (sizeof(std::string) for kString, 0 for kUndefined). Kiln holds 4-bit integers
// one per byte (sign-extended for kInt4); ONNX files pack them two per byte, which the importer
// undoes.
size_t dtype_size(DType dtype);
// ONNX spelling: "float", "int64", "bfloat16", ... ; "undefined" for kUndefined.
const char* dtype_name(DType dtype);
// True for the codes Kiln knows (0..22).
bool dtype_is_known(int32_t code);

// IEEE half and bfloat16 stored as raw bits; conversions live in src/kiln/ir/float16.h.
struct Float16 {
  uint16_t bits = 0;
};
struct BFloat16 {
  uint16_t bits = 0;
};
// The 8-bit floats of ONNX (opset 19) stored as raw bits; conversions live in
// src/kiln/ir/float8.h. One type per format so that a dtype names its storage type.
template <DType kFormat>
struct Float8Bits {
  uint8_t bits = 0;
};
using Float8E4M3FN = Float8Bits<DType::kFloat8E4M3FN>;
using Float8E4M3FNUZ = Float8Bits<DType::kFloat8E4M3FNUZ>;
using Float8E5M2 = Float8Bits<DType::kFloat8E5M2>;
using Float8E5M2FNUZ = Float8Bits<DType::kFloat8E5M2FNUZ>;
// 4-bit integers (opset 21), one per byte: Int4 holds -8..7, UInt4 0..15.
struct Int4 {
  int8_t value = 0;
};
struct UInt4 {
  uint8_t value = 0;
};

class Tensor {
 public:
  Tensor() = default;

  // A new owning tensor, zero-filled (empty strings for kString). On an impossible size (negative
  // dim, overflow) returns an undefined tensor; throws std::bad_alloc when the memory cannot be had
  // (or a session's memory limit refuses it: Session's load and runs turn it into AllocationFailure).
  static Tensor allocate(DType dtype, std::vector<int64_t> shape);
  // A non-owning view of `data`, which must outlive every copy of the view. Not for kString.
  static Tensor view(DType dtype, std::vector<int64_t> shape, void* data);
  // A tensor over `data`, an aliasing pointer that keeps the memory's owner (an artifact's bytes) alive
  // as long as any copy of the tensor. Not for kString. The memory may be read-only.
  static Tensor shared_view(DType dtype, std::vector<int64_t> shape, std::shared_ptr<void> data);
  // An owning tensor holding `values` (element type must match dtype's storage type).
  template <class T>
  static Tensor from_vector(DType dtype, std::vector<int64_t> shape, const std::vector<T>& values) {
    Tensor t = allocate(dtype, std::move(shape));
    T* out = t.data<T>();
    for (size_t i = 0; i < values.size() && i < static_cast<size_t>(t.element_count()); ++i) out[i] = values[i];
    return t;
  }

  bool defined() const { return dtype_ != DType::kUndefined; }
  DType dtype() const { return dtype_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  int64_t rank() const { return static_cast<int64_t>(shape_.size()); }
  int64_t element_count() const;
  size_t byte_size() const { return static_cast<size_t>(element_count()) * dtype_size(dtype_); }
  bool owns_storage() const { return storage_ != nullptr; }

  void* raw_data() { return data_; }
  const void* raw_data() const { return data_; }
  template <class T>
  T* data() { return static_cast<T*>(data_); }
  template <class T>
  const T* data() const { return static_cast<const T*>(data_); }

  // Deep, owning copy.
  Tensor clone() const;
  // Same storage, new shape with the same element count; undefined tensor if counts differ.
  Tensor reshaped(std::vector<int64_t> shape) const;

 private:
  DType dtype_ = DType::kUndefined;
  std::vector<int64_t> shape_;
  std::shared_ptr<void> storage_;  // null for views
  void* data_ = nullptr;
};

// A tensor of pseudo-random values from `seed` (same seed, same values): floats uniform in [-1, 1),
// integers in [0, 10), bools 0/1, strings "s<k>". Undefined tensor for an impossible shape.
Tensor random_tensor(DType dtype, std::vector<int64_t> shape, uint64_t seed);
// Element `index` of a numeric or bool tensor as double (NaN for strings and out-of-range indexes).
double element_as_double(const Tensor& tensor, int64_t index);

// Product of dims; -1 when a dim is negative or the product overflows int64.
int64_t shape_element_count(const std::vector<int64_t>& shape);
// "[1,3,224,224]"
std::string shape_to_string(const std::vector<int64_t>& shape);

}  // namespace kiln
