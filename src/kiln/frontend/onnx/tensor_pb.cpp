// .pb value reading and writing through the frontend's single TensorProto conversion.
#include "kiln/frontend/onnx/tensor_pb.h"

#include <onnx/onnx-data_pb.h>
#include <onnx/onnx_pb.h>

#include <climits>

#include "kiln/frontend/onnx/tensor_proto.h"
#include "kiln/io/file.h"

namespace kiln::frontend {

Result<Tensor> read_tensor_pb(const std::string& path) {
  KILN_ASSIGN_OR_RETURN(std::string bytes, io::read_file(path));
  onnx::TensorProto proto;
  if (bytes.size() > static_cast<size_t>(INT_MAX) || !proto.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
    return invalid_argument(path + ": not a serialized ONNX TensorProto");
  Result<Tensor> tensor = tensor_from_proto(proto, io::parent_folder(path));
  if (!tensor.is_ok()) return invalid_argument(path + ": " + tensor.status().message());
  return tensor;
}

namespace {

Result<Value> value_from_sequence(const onnx::SequenceProto& proto, const std::string& path) {
  if (proto.elem_type() != onnx::SequenceProto::TENSOR)
    return invalid_argument(path + ": only sequences of tensors are supported");
  std::vector<Tensor> elements;
  for (const auto& t : proto.tensor_values()) {
    Result<Tensor> tensor = tensor_from_proto(t, io::parent_folder(path));
    if (!tensor.is_ok()) return invalid_argument(path + ": " + tensor.status().message());
    elements.push_back(std::move(tensor).value());
  }
  // An empty sequence carries no element type in the file; undefined until the model says.
  const DType dtype = elements.empty() ? DType::kUndefined : elements[0].dtype();
  return Value::sequence(dtype, std::move(elements));
}

Result<Value> value_from_optional(const onnx::OptionalProto& proto, const std::string& path) {
  switch (proto.elem_type()) {
    case onnx::OptionalProto::UNDEFINED: return Value::empty_optional();
    case onnx::OptionalProto::TENSOR: {
      Result<Tensor> tensor = tensor_from_proto(proto.tensor_value(), io::parent_folder(path));
      if (!tensor.is_ok()) return invalid_argument(path + ": " + tensor.status().message());
      return Value::optional_of(std::move(tensor).value());
    }
    case onnx::OptionalProto::SEQUENCE: {
      KILN_ASSIGN_OR_RETURN(Value seq, value_from_sequence(proto.sequence_value(), path));
      return Value::optional_of(std::move(seq));
    }
    default: return invalid_argument(path + ": unsupported optional element type");
  }
}

template <class Proto>
Result<Proto> parse(const std::string& path, const char* what) {
  KILN_ASSIGN_OR_RETURN(std::string bytes, io::read_file(path));
  Proto proto;
  if (bytes.size() > static_cast<size_t>(INT_MAX) || !proto.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
    return invalid_argument(path + ": not a serialized ONNX " + what);
  return proto;
}

}  // namespace

Result<Value> read_value_pb(const std::string& path, Value::Kind kind) {
  switch (kind) {
    case Value::Kind::kTensor: {
      KILN_ASSIGN_OR_RETURN(Tensor t, read_tensor_pb(path));
      return Value(std::move(t));
    }
    case Value::Kind::kSequence: {
      KILN_ASSIGN_OR_RETURN(auto proto, parse<onnx::SequenceProto>(path, "SequenceProto"));
      return value_from_sequence(proto, path);
    }
    case Value::Kind::kOptional: {
      KILN_ASSIGN_OR_RETURN(auto proto, parse<onnx::OptionalProto>(path, "OptionalProto"));
      return value_from_optional(proto, path);
    }
  }
  return invalid_argument(path + ": unknown value kind");
}

namespace {

onnx::SequenceProto sequence_to_proto(const Value& sequence) {
  onnx::SequenceProto proto;
  proto.set_elem_type(onnx::SequenceProto::TENSOR);
  for (const Tensor& t : sequence.elements()) *proto.add_tensor_values() = tensor_to_proto(t);
  return proto;
}

onnx::OptionalProto optional_to_proto(const Value& optional) {
  onnx::OptionalProto proto;
  if (!optional.has_element()) {
    proto.set_elem_type(onnx::OptionalProto::UNDEFINED);
  } else if (optional.element().is_tensor()) {
    proto.set_elem_type(onnx::OptionalProto::TENSOR);
    *proto.mutable_tensor_value() = tensor_to_proto(optional.element().tensor());
  } else {
    proto.set_elem_type(onnx::OptionalProto::SEQUENCE);
    *proto.mutable_sequence_value() = sequence_to_proto(optional.element());
  }
  return proto;
}

std::string serialized_value(const Value& value) {
  switch (value.kind()) {
    case Value::Kind::kTensor: return tensor_to_proto(value.tensor()).SerializeAsString();
    case Value::Kind::kSequence: return sequence_to_proto(value).SerializeAsString();
    case Value::Kind::kOptional: return optional_to_proto(value).SerializeAsString();
  }
  return {};
}

}  // namespace

Status write_value_pb(const std::string& path, const Value& value) {
  if (value.is_tensor() && !value.tensor().defined()) return invalid_argument(path + ": no tensor to write");
  return io::write_file_atomic(path, serialized_value(value));
}

}  // namespace kiln::frontend
