// The public tensor- and value-file API (include/kiln/tensor_io.h): picks the format by file
// extension, and carries bfloat16 through formats without it as uint16 bits.
#include "kiln/tensor_io.h"

#include <cstring>

#include "kiln/io/npy.h"
#include "kiln/frontend/onnx/tensor_pb.h"

namespace kiln {

namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The same 16-bit elements under another 16-bit element type (uint16 <-> bfloat16).
Tensor with_16bit_type(const Tensor& tensor, DType dtype) {
  Tensor copy = Tensor::allocate(dtype, tensor.shape());
  if (tensor.byte_size() > 0) std::memcpy(copy.raw_data(), tensor.raw_data(), tensor.byte_size());
  return copy;
}

Tensor as_declared_tensor(const Tensor& tensor, DType declared) {
  if (declared == DType::kBFloat16 && tensor.dtype() == DType::kUInt16) return with_16bit_type(tensor, DType::kBFloat16);
  return tensor;
}

// `value` with the element type the model declares where the file could not say it.
Value as_declared(const Value& value, DType declared) {
  switch (value.kind()) {
    case Value::Kind::kTensor: return as_declared_tensor(value.tensor(), declared);
    case Value::Kind::kSequence: {
      if (value.elements().empty()) return Value::sequence(declared, {});
      std::vector<Tensor> elements;
      for (const Tensor& t : value.elements()) elements.push_back(as_declared_tensor(t, declared));
      const DType element_dtype = elements[0].dtype();
      return Value::sequence(element_dtype, std::move(elements));
    }
    case Value::Kind::kOptional:
      return value.has_element() ? Value::optional_of(as_declared(value.element(), declared)) : value;
  }
  return value;
}

const char* kind_name(Value::Kind kind) {
  switch (kind) {
    case Value::Kind::kTensor: return "tensor";
    case Value::Kind::kSequence: return "sequence";
    case Value::Kind::kOptional: return "optional";
  }
  return "value";
}

}  // namespace

Result<Tensor> read_tensor_file(const std::string& path) {
  if (ends_with(path, ".npy")) return io::read_npy(path);
  if (ends_with(path, ".pb")) return frontend::read_tensor_pb(path);
  return invalid_argument("'" + path + "': tensor files must end in .npy or .pb");
}

Status write_npy_file(const std::string& path, const Tensor& tensor) { return io::write_npy(path, tensor); }

Result<Value> read_value_file(const std::string& path, Value::Kind kind, DType declared_dtype) {
  if (ends_with(path, ".pb")) {
    KILN_ASSIGN_OR_RETURN(Value value, frontend::read_value_pb(path, kind));
    return as_declared(value, declared_dtype);
  }
  if (!ends_with(path, ".npy")) return invalid_argument("'" + path + "': value files must end in .npy or .pb");
  if (kind != Value::Kind::kTensor)
    return invalid_argument("'" + path + "': a .npy file holds a tensor, not a " + kind_name(kind) + "; give a " +
                            (kind == Value::Kind::kSequence ? "SequenceProto" : "OptionalProto") + " .pb file");
  KILN_ASSIGN_OR_RETURN(Tensor tensor, io::read_npy(path));
  return Value(as_declared_tensor(tensor, declared_dtype));
}

Status write_value_file(const std::string& path, const Value& value) {
  if (ends_with(path, ".pb")) return frontend::write_value_pb(path, value);
  if (!ends_with(path, ".npy")) return invalid_argument("'" + path + "': value files must end in .npy or .pb");
  if (!value.is_tensor())
    return invalid_argument("'" + path + "': a .npy file holds a tensor, not a " + kind_name(value.kind()) +
                            "; write it as .pb");
  const Tensor& tensor = value.tensor();
  return io::write_npy(path, tensor.dtype() == DType::kBFloat16 ? with_16bit_type(tensor, DType::kUInt16) : tensor);
}

}  // namespace kiln
