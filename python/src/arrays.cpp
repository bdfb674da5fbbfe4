// numpy arrays <-> Kiln tensors and values (arrays.h).
#include "arrays.h"

#include <pybind11/stl.h>

#include <cstring>
#include <memory>

#include "status_error.h"

namespace kiln::python {

using namespace pybind11::literals;

namespace {

// numpy's array flags (numpy/ndarraytypes.h).
constexpr int kNpyCContiguous = 0x0001;
constexpr int kNpyAligned = 0x0100;
constexpr int kNpyWriteable = 0x0400;

// Whether Kiln can use `array`'s memory as it is (C order, aligned, native byte order).
bool usable_in_place(const py::array& array) {
  return (array.flags() & kNpyCContiguous) && (array.flags() & kNpyAligned) && array.dtype().attr("isnative").cast<bool>();
}

// Imported once and never released: a static py::object would be released after the interpreter
// has finalised, at process exit.
py::module_& numpy() {
  static auto* module = new py::module_(py::module_::import("numpy"));
  return *module;
}

// Kiln's dtype for a numeric or bool numpy dtype, kUndefined for others (strings are handled apart).
DType numeric_dtype(const py::dtype& dtype) {
  const char kind = dtype.kind();
  const auto size = dtype.itemsize();
  switch (kind) {
    case 'f': return size == 2 ? DType::kFloat16 : size == 4 ? DType::kFloat : size == 8 ? DType::kDouble : DType::kUndefined;
    case 'i': return size == 1 ? DType::kInt8 : size == 2 ? DType::kInt16 : size == 4 ? DType::kInt32 : size == 8 ? DType::kInt64 : DType::kUndefined;
    case 'u': return size == 1 ? DType::kUInt8 : size == 2 ? DType::kUInt16 : size == 4 ? DType::kUInt32 : size == 8 ? DType::kUInt64 : DType::kUndefined;
    case 'b': return DType::kBool;
    case 'c': return size == 8 ? DType::kComplex64 : size == 16 ? DType::kComplex128 : DType::kUndefined;
    default: return DType::kUndefined;
  }
}

std::vector<int64_t> shape_of(const py::array& array) {
  return std::vector<int64_t>(array.shape(), array.shape() + array.ndim());
}

// One element of a str, bytes or object array as UTF-8 bytes.
std::string string_element(const std::string& name, py::handle item) {
  if (py::isinstance<py::str>(item)) return item.cast<std::string>();
  if (py::isinstance<py::bytes>(item)) return std::string(item.cast<py::bytes>());
  throw StatusError(invalid_argument("input '" + name + "': a string tensor's elements must be str or bytes, got " +
                                     std::string(py::str(item.get_type().attr("__name__")))));
}

Tensor string_tensor(const std::string& name, const py::array& array) {
  Tensor tensor = Tensor::allocate(DType::kString, shape_of(array));
  std::string* out = tensor.data<std::string>();
  int64_t i = 0;
  for (py::handle item : array.attr("ravel")().attr("tolist")()) out[i++] = string_element(name, item);
  return tensor;
}

}  // namespace

py::dtype numpy_dtype(const std::string& name, DType dtype) {
  switch (dtype) {
    case DType::kFloat: return py::dtype::of<float>();
    case DType::kDouble: return py::dtype::of<double>();
    case DType::kFloat16: return py::dtype("float16");
    case DType::kInt8: case DType::kInt4: return py::dtype::of<int8_t>();
    case DType::kUInt8: case DType::kUInt4: return py::dtype::of<uint8_t>();
    case DType::kInt16: return py::dtype::of<int16_t>();
    case DType::kUInt16: return py::dtype::of<uint16_t>();
    case DType::kInt32: return py::dtype::of<int32_t>();
    case DType::kUInt32: return py::dtype::of<uint32_t>();
    case DType::kInt64: return py::dtype::of<int64_t>();
    case DType::kUInt64: return py::dtype::of<uint64_t>();
    case DType::kBool: return py::dtype::of<bool>();
    case DType::kComplex64: return py::dtype("complex64");
    case DType::kComplex128: return py::dtype("complex128");
    case DType::kString: return py::dtype("O");
    default:
      throw StatusError(invalid_argument("'" + name + "' is " + dtype_name(dtype) +
                                         ", which numpy has no type for: Cast it to float in the model to read it from Python"));
  }
}

DType kiln_dtype_of(const std::string& name, const py::dtype& dtype) {
  const DType kiln_dtype = numeric_dtype(dtype);
  if (kiln_dtype == DType::kUndefined)
    throw StatusError(invalid_argument("'" + name + "': numpy dtype " + std::string(py::str(static_cast<const py::handle&>(dtype))) + " has no Kiln type"));
  return kiln_dtype;
}

Tensor tensor_from_array(const std::string& name, py::handle object, std::vector<py::object>& keep_alive) {
  py::array array = numpy().attr("asarray")(object);
  const py::dtype dtype = array.dtype();
  if (dtype.kind() == 'U' || dtype.kind() == 'S' || dtype.kind() == 'O') return string_tensor(name, array);
  const DType kiln_dtype = kiln_dtype_of(name, dtype);
  if (!usable_in_place(array)) array = numpy().attr("ascontiguousarray")(array, dtype.attr("newbyteorder")("="));
  keep_alive.push_back(array);
  return Tensor::view(kiln_dtype, shape_of(array), const_cast<void*>(array.data()));
}

Tensor writable_view(const std::string& name, py::array array) {
  if (!usable_in_place(array) || !(array.flags() & kNpyWriteable))
    throw StatusError(invalid_argument("output '" + name + "': bind a writable, C-ordered, aligned numpy array in native byte order"));
  return Tensor::view(kiln_dtype_of(name, array.dtype()), shape_of(array), array.mutable_data());
}

Value value_from_python(const TensorInfo& info, py::handle object, std::vector<py::object>& keep_alive) {
  const bool is_list = py::isinstance<py::list>(object) || py::isinstance<py::tuple>(object);
  auto sequence = [&]() {
    std::vector<Tensor> elements;
    for (py::handle item : object) elements.push_back(tensor_from_array(info.name, item, keep_alive));
    return Value::sequence(info.dtype, std::move(elements));
  };
  switch (info.kind) {
    case Value::Kind::kTensor: return tensor_from_array(info.name, object, keep_alive);
    case Value::Kind::kSequence:
      if (!is_list) throw StatusError(invalid_argument("input '" + info.name + "' is a sequence: give a list of arrays"));
      return sequence();
    case Value::Kind::kOptional:
      if (object.is_none()) return Value::empty_optional();
      return Value::optional_of(is_list ? sequence() : Value(tensor_from_array(info.name, object, keep_alive)));
  }
  return Value();
}

py::object array_from_tensor(const std::string& name, const Tensor& tensor) {
  const py::dtype dtype = numpy_dtype(name, tensor.dtype());
  if (tensor.dtype() == DType::kString) {
    py::list items;
    const std::string* data = tensor.data<std::string>();
    for (int64_t i = 0; i < tensor.element_count(); ++i) items.append(py::str(data[i]));
    return numpy().attr("array")(items, "dtype"_a = dtype).attr("reshape")(tensor.shape());
  }
  // The array views the tensor's storage; a copy of the tensor (sharing it) lives in the capsule.
  auto* owner = new Tensor(tensor.owns_storage() ? tensor : tensor.clone());
  py::capsule base(owner, [](void* p) { delete static_cast<Tensor*>(p); });
  return py::array(dtype, owner->shape(), owner->raw_data(), base);
}

py::object python_from_value(const std::string& name, const Value& value) {
  switch (value.kind()) {
    case Value::Kind::kTensor: return array_from_tensor(name, value.tensor());
    case Value::Kind::kSequence: {
      py::list items;
      for (const Tensor& t : value.elements()) items.append(array_from_tensor(name, t));
      return items;
    }
    case Value::Kind::kOptional: return value.has_element() ? python_from_value(name, value.element()) : py::none();
  }
  return py::none();
}

}  // namespace kiln::python
