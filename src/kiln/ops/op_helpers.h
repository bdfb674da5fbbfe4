// Helpers every op family shares: dtype dispatch, axis normalisation, numpy broadcasting of
// (symbolic) shapes and index iteration, reading integer tensors (shapes, axes, pads).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kiln/ir/float16.h"
#include "kiln/ir/shape.h"
#include "kiln/ops/family_support.h"
#include "kiln/status.h"
#include "kiln/tensor.h"

namespace kiln::ops {

// Calls fn.template operator()<T>() with T the storage type of `dtype`:
//   visit_dtype(t.dtype(), [&]<class T>() { ... });
// Float16/BFloat16 map to kiln::Float16/BFloat16, kBool to bool, kString to std::string.
// Returns false (without calling) for kUndefined and complex types.
template <class F>
bool visit_dtype(DType dtype, F&& fn) {
  switch (dtype) {
    case DType::kFloat: fn.template operator()<float>(); return true;
    case DType::kDouble: fn.template operator()<double>(); return true;
    case DType::kFloat16: fn.template operator()<Float16>(); return true;
    case DType::kBFloat16: fn.template operator()<BFloat16>(); return true;
    case DType::kInt8: fn.template operator()<int8_t>(); return true;
    case DType::kInt16: fn.template operator()<int16_t>(); return true;
    case DType::kInt32: fn.template operator()<int32_t>(); return true;
    case DType::kInt64: fn.template operator()<int64_t>(); return true;
    case DType::kUInt8: fn.template operator()<uint8_t>(); return true;
    case DType::kUInt16: fn.template operator()<uint16_t>(); return true;
    case DType::kUInt32: fn.template operator()<uint32_t>(); return true;
    case DType::kUInt64: fn.template operator()<uint64_t>(); return true;
    case DType::kBool: fn.template operator()<bool>(); return true;
    case DType::kString: fn.template operator()<std::string>(); return true;
    default: return false;
  }
}

// Element <-> double for arithmetic in reference kernels (exact for all but 64-bit ints > 2^53,
// which kernels that care handle separately).
template <class T>
double to_double(const T& v) {
  if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) {
    return ir::to_float(v);
  } else {
    return static_cast<double>(v);
  }
}
// Integers saturate: a value past the type's range becomes its lowest or highest, NaN becomes 0
// (a plain conversion of those is undefined behaviour in C++; ONNX leaves such casts unspecified).
template <class T>
T from_double(double v) {
  if constexpr (std::is_same_v<T, Float16>) {
    return ir::to_float16(static_cast<float>(v));
  } else if constexpr (std::is_same_v<T, BFloat16>) {
    return ir::to_bfloat16(static_cast<float>(v));
  } else if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    return saturating_cast<T>(v);
  } else {
    return static_cast<T>(v);
  }
}

bool is_float_dtype(DType dtype);    // float, double, float16, bfloat16
bool is_integer_dtype(DType dtype);  // signed or unsigned ints (not bool)
bool is_signed_dtype(DType dtype);

// Maps a possibly negative axis into [0, rank); InvalidModel naming `what` when out of range.
Result<int64_t> normalize_axis(int64_t axis, int64_t rank, const std::string& what = "axis");

// Numpy broadcast of two (possibly symbolic) shapes; InvalidModel when incompatible.
Result<ir::Shape> broadcast_shapes(const ir::Shape& a, const ir::Shape& b);
Result<std::vector<int64_t>> broadcast_static(const std::vector<int64_t>& a, const std::vector<int64_t>& b);

// Row-major strides of `shape`.
std::vector<int64_t> contiguous_strides(const std::vector<int64_t>& shape);
// Strides for reading a tensor of `in_shape` broadcast to `out_shape` (0 on broadcast dims).
std::vector<int64_t> broadcast_strides(const std::vector<int64_t>& in_shape, const std::vector<int64_t>& out_shape);

// Iterates every index of `shape` in row-major order, keeping one linear offset per operand:
//   BroadcastIterator it(out_shape, {strides_a, strides_b});
//   for (int64_t i = 0; i < n; ++i, it.next()) out[i] = a[it.offset(0)] + b[it.offset(1)];
class BroadcastIterator {
 public:
  BroadcastIterator(std::vector<int64_t> shape, std::vector<std::vector<int64_t>> operand_strides);
  int64_t offset(size_t operand) const { return offsets_[operand]; }
  void next();

 private:
  std::vector<int64_t> shape_;
  std::vector<std::vector<int64_t>> strides_;
  std::vector<int64_t> index_;
  std::vector<int64_t> offsets_;
};

// Reads an int32/int64 tensor (shape, axes, pads, repeats...) as int64 values.
Result<std::vector<int64_t>> read_int64s(const Tensor& t, const std::string& what);
// Reads a float/double/float16 tensor (scales) as floats.
Result<std::vector<float>> read_floats(const Tensor& t, const std::string& what);

// Every element of a numeric or bool tensor as a double (kernels that compute in double read their
// inputs this way).
std::vector<double> as_doubles(const Tensor& t);

// Writes `v` into element i of a numeric or bool tensor, converted to its element type (kernels
// that compute in double store their results this way).
void store_double(Tensor& t, int64_t i, double v);

// A new int64 1-D tensor holding `values` (for Shape and folded shape values).
Tensor make_int64_tensor(const std::vector<int64_t>& values);

}  // namespace kiln::ops
