// TensorProto decoding. ONNX stores small integer types, bool and the 16-bit and 8-bit floats in
// int32_data, uint32 in uint64_data and complex numbers as (real, imaginary) pairs in
// float_data/double_data. 4-bit integers come packed two per byte (the first element in the low
// nibble; one packed byte per int32_data entry), and are unpacked to Kiln's one per byte.
#include "kiln/frontend/onnx/tensor_proto.h"

#include <cstdint>
#include <cstring>
#include <optional>

#include "kiln/frontend/onnx/external_data.h"
#include "kiln/ir/buffer.h"

namespace kiln::frontend {

namespace {

std::string label(const onnx::TensorProto& proto) { return "tensor '" + proto.name() + "'"; }

Status size_mismatch(const onnx::TensorProto& proto, const char* field, int64_t have, int64_t want) {
  return invalid_model(label(proto) + " has dims " + shape_to_string({proto.dims().begin(), proto.dims().end()}) +
                       " (" + std::to_string(want) + " values) but " + field + " holds " + std::to_string(have));
}

// Copies a repeated field into `out`, converting each value to the storage type T.
template <class T, class Field>
Status copy_field(const onnx::TensorProto& proto, const Field& field, const char* field_name, int64_t per_element,
                  Tensor& out) {
  const int64_t want = out.element_count() * per_element;
  if (field.size() != want) return size_mismatch(proto, field_name, field.size(), want);
  T* dst = reinterpret_cast<T*>(out.raw_data());
  for (int64_t i = 0; i < want; ++i) dst[i] = static_cast<T>(field.Get(static_cast<int>(i)));
  return Status::ok();
}

// 16-bit and 8-bit floats live in the low bits of int32_data.
template <class T>
Status copy_float_bits(const onnx::TensorProto& proto, Tensor& out) {
  const int64_t want = out.element_count();
  if (proto.int32_data_size() != want) return size_mismatch(proto, "int32_data", proto.int32_data_size(), want);
  T* dst = out.data<T>();
  for (int64_t i = 0; i < want; ++i) dst[i].bits = static_cast<decltype(T::bits)>(proto.int32_data(static_cast<int>(i)));
  return Status::ok();
}

Status copy_typed_fields(const onnx::TensorProto& proto, Tensor& out) {
  switch (out.dtype()) {
    case DType::kFloat: return copy_field<float>(proto, proto.float_data(), "float_data", 1, out);
    case DType::kComplex64: return copy_field<float>(proto, proto.float_data(), "float_data", 2, out);
    case DType::kDouble: return copy_field<double>(proto, proto.double_data(), "double_data", 1, out);
    case DType::kComplex128: return copy_field<double>(proto, proto.double_data(), "double_data", 2, out);
    case DType::kInt64: return copy_field<int64_t>(proto, proto.int64_data(), "int64_data", 1, out);
    case DType::kUInt64: return copy_field<uint64_t>(proto, proto.uint64_data(), "uint64_data", 1, out);
    case DType::kUInt32: return copy_field<uint32_t>(proto, proto.uint64_data(), "uint64_data", 1, out);
    case DType::kInt32: return copy_field<int32_t>(proto, proto.int32_data(), "int32_data", 1, out);
    case DType::kInt16: return copy_field<int16_t>(proto, proto.int32_data(), "int32_data", 1, out);
    case DType::kUInt16: return copy_field<uint16_t>(proto, proto.int32_data(), "int32_data", 1, out);
    case DType::kInt8: return copy_field<int8_t>(proto, proto.int32_data(), "int32_data", 1, out);
    case DType::kUInt8: return copy_field<uint8_t>(proto, proto.int32_data(), "int32_data", 1, out);
    case DType::kBool: return copy_field<bool>(proto, proto.int32_data(), "int32_data", 1, out);
    case DType::kFloat16: return copy_float_bits<Float16>(proto, out);
    case DType::kBFloat16: return copy_float_bits<BFloat16>(proto, out);
    case DType::kFloat8E4M3FN: return copy_float_bits<Float8E4M3FN>(proto, out);
    case DType::kFloat8E4M3FNUZ: return copy_float_bits<Float8E4M3FNUZ>(proto, out);
    case DType::kFloat8E5M2: return copy_float_bits<Float8E5M2>(proto, out);
    case DType::kFloat8E5M2FNUZ: return copy_float_bits<Float8E5M2FNUZ>(proto, out);
    case DType::kUInt4:
    case DType::kInt4: break;  // read packed, as uint8 (tensor_from_proto)
    case DType::kString: {
      const int64_t want = out.element_count();
      if (proto.string_data_size() != want) return size_mismatch(proto, "string_data", proto.string_data_size(), want);
      for (int64_t i = 0; i < want; ++i) out.data<std::string>()[i] = proto.string_data(static_cast<int>(i));
      return Status::ok();
    }
    case DType::kUndefined: break;
  }
  return internal_error(label(proto) + ": unhandled element type");
}

Status copy_raw_data(const onnx::TensorProto& proto, Tensor& out) {
  if (out.dtype() == DType::kString) return invalid_model(label(proto) + ": string tensors cannot use raw_data");
  const std::string& raw = proto.raw_data();
  if (raw.size() != out.byte_size())
    return invalid_model(label(proto) + " has dims " +
                         shape_to_string({proto.dims().begin(), proto.dims().end()}) + " of " +
                         dtype_name(static_cast<DType>(proto.data_type())) + " (" + std::to_string(out.byte_size()) +
                         " bytes) but raw_data holds " + std::to_string(raw.size()) + " bytes");
  if (!raw.empty()) std::memcpy(out.raw_data(), raw.data(), raw.size());
  return Status::ok();
}

// Storage for an initializer, which the caller fills in full: uninitialised and on base pages
// (ir/buffer.h) for fixed-size types, zero-filled strings otherwise.
Tensor imported_tensor(DType dtype, std::vector<int64_t> dims) {
  if (dtype == DType::kString) return Tensor::allocate(dtype, std::move(dims));
  const auto count = static_cast<uint64_t>(shape_element_count(dims));
  if (count > (uint64_t{1} << 40) / dtype_size(dtype)) return Tensor();  // the limit Tensor::allocate keeps
  const size_t bytes = static_cast<size_t>(count) * dtype_size(dtype);
  std::shared_ptr<void> storage = allocate_buffer(bytes, Paging::kBasePages);
  if (!storage) return Tensor();
  return Tensor::shared_view(dtype, std::move(dims), std::move(storage));
}

// count elements of `dtype` in bytes, or the largest uint64 when that overflows (no file is that long).
uint64_t saturating_byte_count(uint64_t count, DType dtype) {
  uint64_t bytes = 0;
  if (__builtin_mul_overflow(count, uint64_t{dtype_size(dtype)}, &bytes)) return UINT64_MAX;
  return bytes;
}

bool is_4bit(DType dtype) { return dtype == DType::kInt4 || dtype == DType::kUInt4; }

// The most elements the data held in `proto` itself can describe: each takes at least half a byte
// of raw_data or half an entry of a typed field (4-bit types pack two). A bound checked before
// allocating, so that a few bytes declaring huge dims are refused rather than allocated.
uint64_t elements_held(const onnx::TensorProto& proto) {
  const uint64_t entries = uint64_t{proto.raw_data().size()} + uint64_t(proto.float_data_size()) +
                           uint64_t(proto.int32_data_size()) + uint64_t(proto.string_data_size()) +
                           uint64_t(proto.int64_data_size()) + uint64_t(proto.double_data_size()) +
                           uint64_t(proto.uint64_data_size());
  return 2 * entries;
}

// Unpacks two 4-bit elements per byte of `packed` (the first in the low nibble) into `out`, one per
// byte, sign-extending int4.
void unpack_4bit(const Tensor& packed, Tensor& out) {
  const uint8_t* src = packed.data<uint8_t>();
  auto* dst = static_cast<uint8_t*>(out.raw_data());
  const bool is_signed = out.dtype() == DType::kInt4;
  for (int64_t i = 0; i < out.element_count(); ++i) {
    const uint8_t nibble = (src[i / 2] >> (4 * (i & 1))) & 0x0F;
    dst[i] = is_signed ? static_cast<uint8_t>(static_cast<int8_t>((nibble ^ 0x08) - 0x08)) : nibble;
  }
}

}  // namespace

Result<Tensor> tensor_from_proto(const onnx::TensorProto& proto, const std::string& base_dir) {
  if (!dtype_is_known(proto.data_type()) || proto.data_type() == 0)
    return invalid_model(label(proto) + " has unknown data type " + std::to_string(proto.data_type()));
  if (proto.has_segment()) return invalid_model(label(proto) + " is segmented, which Kiln does not read");
  std::vector<int64_t> dims(proto.dims().begin(), proto.dims().end());
  for (int64_t d : dims)
    if (d < 0) return invalid_model(label(proto) + " has a negative dim in " + shape_to_string(dims));
  if (shape_element_count(dims) < 0) return invalid_model(label(proto) + " has too many elements: " + shape_to_string(dims));
  const DType dtype = static_cast<DType>(proto.data_type());
  const int64_t count = shape_element_count(dims);
  if (proto.data_location() != onnx::TensorProto::EXTERNAL && static_cast<uint64_t>(count) > elements_held(proto))
    return invalid_model(label(proto) + " has dims " + shape_to_string(dims) + " (" + std::to_string(count) +
                         " elements) but holds data for at most " + std::to_string(elements_held(proto)));
  // 4-bit elements arrive packed: read as bytes, then unpacked into `out`.
  const uint64_t stored_bytes = is_4bit(dtype) ? (static_cast<uint64_t>(count) + 1) / 2
                                               : saturating_byte_count(static_cast<uint64_t>(count), dtype);
  // External data is checked against its file before the tensor is allocated.
  std::optional<ExternalData> external;
  if (proto.data_location() == onnx::TensorProto::EXTERNAL) {
    KILN_ASSIGN_OR_RETURN(ExternalData opened, ExternalData::open(proto, base_dir, stored_bytes));
    external.emplace(std::move(opened));
  }
  Tensor out = imported_tensor(dtype, dims);
  Tensor stored = is_4bit(dtype) ? imported_tensor(DType::kUInt8, {(count + 1) / 2}) : out;
  if (!out.defined() || !stored.defined())
    return allocation_failure(label(proto) + ": cannot allocate " + dtype_name(dtype) + shape_to_string(dims));
  if (external) {
    KILN_RETURN_IF_ERROR(external->read_into(stored));
  } else if (proto.has_raw_data()) {
    KILN_RETURN_IF_ERROR(copy_raw_data(proto, stored));
  } else {
    KILN_RETURN_IF_ERROR(copy_typed_fields(proto, stored));
  }
  if (is_4bit(dtype)) unpack_4bit(stored, out);
  return out;
}

onnx::TensorProto tensor_to_proto(const Tensor& tensor) {
  onnx::TensorProto proto;
  proto.set_data_type(static_cast<int>(tensor.dtype()));
  for (int64_t d : tensor.shape()) proto.add_dims(d);
  const int64_t count = tensor.element_count();
  if (tensor.dtype() == DType::kString) {
    for (int64_t i = 0; i < count; ++i) proto.add_string_data(tensor.data<std::string>()[i]);
  } else if (is_4bit(tensor.dtype())) {
    std::string packed(static_cast<size_t>((count + 1) / 2), '\0');
    const auto* src = static_cast<const uint8_t*>(tensor.raw_data());
    for (int64_t i = 0; i < count; ++i) packed[static_cast<size_t>(i / 2)] |= static_cast<char>((src[i] & 0x0F) << (4 * (i & 1)));
    proto.set_raw_data(std::move(packed));
  } else {
    proto.set_raw_data(tensor.raw_data(), tensor.byte_size());
  }
  return proto;
}

}  // namespace kiln::frontend
