// numpy arrays <-> Kiln tensors and values for the `kiln` Python module: inputs are read in place
// when numpy already holds them as Kiln would (C order, aligned, a dtype Kiln has), outputs become
// arrays over Kiln's own buffers. Neither direction copies element data except where said.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <string>
#include <vector>

#include "kiln/session.h"
#include "kiln/tensor.h"
#include "kiln/value.h"

namespace kiln::python {

namespace py = pybind11;

// The Kiln tensor `object` (a numpy array, or what numpy.asarray makes of it) holds, named `name`
// in messages. A C-ordered, aligned array of a numeric or bool dtype is viewed in place: the
// array is appended to `keep_alive`, which must outlive the tensor. Other layouts are copied once
// into C order; str / object arrays of str become string tensors (copied). Throws StatusError
// (InvalidArgument) for a dtype Kiln has no type for.
Tensor tensor_from_array(const std::string& name, py::handle object, std::vector<py::object>& keep_alive);

// A view over `array`, which Kiln may write: InvalidArgument naming `name` unless it is writable,
// C-ordered, aligned, in native byte order and of a numeric or bool dtype (bound output buffers).
Tensor writable_view(const std::string& name, py::array array);

// A model input given as `object` for `info`: a tensor, a list of arrays (a sequence), or None
// (an empty optional).
Value value_from_python(const TensorInfo& info, py::handle object, std::vector<py::object>& keep_alive);

// A numpy array over `tensor`'s storage (no copy; the array keeps the storage alive). String
// tensors become object arrays of str (copied); 4-bit integers int8/uint8 arrays (as Kiln holds
// them, one per byte). bfloat16 and float8 have no numpy type: InvalidArgument naming `name`.
py::object array_from_tensor(const std::string& name, const Tensor& tensor);

// An output value: an array, a list of arrays (a sequence), None (an empty optional).
py::object python_from_value(const std::string& name, const Value& value);

// The Kiln dtype of a numeric or bool numpy dtype (throws StatusError naming `name` for others).
DType kiln_dtype_of(const std::string& name, const py::dtype& dtype);

// The numpy dtype of a Kiln dtype (throws StatusError for those numpy lacks).
py::dtype numpy_dtype(const std::string& name, DType dtype);

}  // namespace kiln::python
