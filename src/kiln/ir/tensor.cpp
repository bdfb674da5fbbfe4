// kiln::Tensor storage, element sizes and dtype names.
#include "kiln/tensor.h"

#include <cstring>
#include <limits>
#include <new>

#include "kiln/ir/buffer.h"

namespace kiln {

size_t dtype_size(DType dtype) {
  switch (dtype) {
    case DType::kUndefined: return 0;
    case DType::kBool:
    case DType::kUInt8:
    case DType::kInt8:
    case DType::kFloat8E4M3FN:
    case DType::kFloat8E4M3FNUZ:
    case DType::kFloat8E5M2:
    case DType::kFloat8E5M2FNUZ:
    case DType::kUInt4:
    case DType::kInt4: return 1;
    case DType::kUInt16:
    case DType::kInt16:
    case DType::kFloat16:
    case DType::kBFloat16: return 2;
    case DType::kFloat:
    case DType::kInt32:
    case DType::kUInt32: return 4;
    case DType::kDouble:
    case DType::kInt64:
    case DType::kUInt64:
    case DType::kComplex64: return 8;
    case DType::kComplex128: return 16;
    case DType::kString: return sizeof(std::string);
  }
  return 0;
}

const char* dtype_name(DType dtype) {
  switch (dtype) {
    case DType::kUndefined: return "undefined";
    case DType::kFloat: return "float";
    case DType::kUInt8: return "uint8";
    case DType::kInt8: return "int8";
    case DType::kUInt16: return "uint16";
    case DType::kInt16: return "int16";
    case DType::kInt32: return "int32";
    case DType::kInt64: return "int64";
    case DType::kString: return "string";
    case DType::kBool: return "bool";
    case DType::kFloat16: return "float16";
    case DType::kDouble: return "double";
    case DType::kUInt32: return "uint32";
    case DType::kUInt64: return "uint64";
    case DType::kComplex64: return "complex64";
    case DType::kComplex128: return "complex128";
    case DType::kBFloat16: return "bfloat16";
    case DType::kFloat8E4M3FN: return "float8e4m3fn";
    case DType::kFloat8E4M3FNUZ: return "float8e4m3fnuz";
    case DType::kFloat8E5M2: return "float8e5m2";
    case DType::kFloat8E5M2FNUZ: return "float8e5m2fnuz";
    case DType::kUInt4: return "uint4";
    case DType::kInt4: return "int4";
  }
  return "undefined";
}

bool dtype_is_known(int32_t code) { return code >= 0 && code <= 22; }

int64_t shape_element_count(const std::vector<int64_t>& shape) {
  int64_t count = 1;
  for (int64_t d : shape) {
    if (d < 0) return -1;
    if (d != 0 && count > std::numeric_limits<int64_t>::max() / d) return -1;
    count *= d;
  }
  return count;
}

std::string shape_to_string(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ",";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

int64_t Tensor::element_count() const { return shape_element_count(shape_); }

Tensor Tensor::allocate(DType dtype, std::vector<int64_t> shape) {
  Tensor t;
  const int64_t count = shape_element_count(shape);
  const size_t elem = dtype_size(dtype);
  if (count < 0 || elem == 0 || static_cast<uint64_t>(count) > (uint64_t{1} << 40) / elem) return t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  if (dtype == DType::kString) {
    auto* strings = new std::string[static_cast<size_t>(count) + 1];
    t.storage_ = std::shared_ptr<void>(strings, [](void* p) { delete[] static_cast<std::string*>(p); });
  } else {
    // 64-byte alignment so that every provider can use aligned vector loads.
    const size_t bytes = std::max<size_t>(static_cast<size_t>(count) * elem, 1);
    t.storage_ = allocate_buffer(bytes);
    if (!t.storage_) throw std::bad_alloc();
    std::memset(t.storage_.get(), 0, bytes);
  }
  t.data_ = t.storage_.get();
  return t;
}

Tensor Tensor::view(DType dtype, std::vector<int64_t> shape, void* data) {
  Tensor t;
  if (dtype == DType::kString || shape_element_count(shape) < 0) return t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.data_ = data;
  return t;
}

Tensor Tensor::shared_view(DType dtype, std::vector<int64_t> shape, std::shared_ptr<void> data) {
  Tensor t = view(dtype, std::move(shape), data.get());
  if (t.defined()) t.storage_ = std::move(data);
  return t;
}

Tensor Tensor::clone() const {
  if (!defined()) return Tensor();
  Tensor copy = allocate(dtype_, shape_);
  if (!copy.defined()) return copy;
  if (dtype_ == DType::kString) {
    for (int64_t i = 0; i < element_count(); ++i) copy.data<std::string>()[i] = data<std::string>()[i];
  } else if (byte_size() > 0) {
    std::memcpy(copy.data_, data_, byte_size());
  }
  return copy;
}

Tensor Tensor::reshaped(std::vector<int64_t> shape) const {
  if (shape_element_count(shape) != element_count()) return Tensor();
  Tensor t = *this;
  t.shape_ = std::move(shape);
  return t;
}

}  // namespace kiln
