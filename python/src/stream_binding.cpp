// kiln._kiln.Stream (stream_binding.h).
#include "stream_binding.h"

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include "arrays.h"
#include "status_error.h"

namespace kiln::python {

namespace {

using namespace pybind11::literals;

// A view over `count` elements of numpy dtype `dtype` at `address` (memory the caller owns).
Tensor tensor_at(const std::string& name, py::handle dtype, const std::vector<int64_t>& shape, uintptr_t address) {
  const DType kiln_dtype = kiln_dtype_of(name, py::dtype::from_args(py::reinterpret_borrow<py::object>(dtype)));
  if (address == 0) throw StatusError(invalid_argument("'" + name + "': the buffer address is null"));
  return Tensor::view(kiln_dtype, shape, reinterpret_cast<void*>(address));
}

}  // namespace

NativeStream::NativeStream(std::unique_ptr<Stream> stream, const Session& session) : stream_(std::move(stream)) {
  for (const TensorInfo& info : session.outputs()) output_names_.push_back(info.name);
}

void NativeStream::bind_input(const std::string& name, py::handle array) {
  std::vector<py::object> keep_alive;
  const Tensor tensor = array.is_none() ? Tensor() : tensor_from_array(name, array, keep_alive);
  check(stream_->bind_input(name, tensor));
  input_arrays_[name] = std::move(keep_alive);
}

void NativeStream::bind_zeros(const std::string& name, const std::vector<int64_t>& shape) {
  check(stream_->bind_zeros(name, shape));
  input_arrays_.erase(name);
}

void NativeStream::bind_input_address(const std::string& name, py::handle dtype, const std::vector<int64_t>& shape,
                                      uintptr_t address) {
  check(stream_->bind_input(name, tensor_at(name, dtype, shape, address)));
  input_arrays_.erase(name);
}

void NativeStream::bind_output(const std::string& name, py::handle object) {
  if (object.is_none()) {
    check(stream_->bind_output(name, Tensor()));
    output_arrays_.erase(name);
    return;
  }
  if (!py::isinstance<py::array>(object))
    throw StatusError(invalid_argument("output '" + name + "': bind a numpy array, got " +
                                       std::string(py::str(object.get_type().attr("__name__")))));
  check(stream_->bind_output(name, writable_view(name, py::reinterpret_borrow<py::array>(object))));
  output_arrays_[name] = py::reinterpret_borrow<py::object>(object);
}

void NativeStream::bind_output_address(const std::string& name, py::handle dtype, const std::vector<int64_t>& shape,
                                       uintptr_t address) {
  check(stream_->bind_output(name, tensor_at(name, dtype, shape, address)));
  output_arrays_.erase(name);
}

void NativeStream::carry(const std::string& output, const std::string& input) { check(stream_->carry(output, input)); }

void NativeStream::reset() { stream_->reset(); }

py::list NativeStream::run(const py::dict& feeds, const std::optional<std::vector<std::string>>& output_names,
                           const RunOptions* run_options) {
  for (const auto& [key, array] : feeds) bind_input(key.cast<std::string>(), array);
  Status ran;
  {
    py::gil_scoped_release release;
    ran = run_options ? stream_->run(*run_options) : stream_->run();
  }
  check(ran);
  py::list out;
  for (const std::string& name : output_names ? *output_names : output_names_) out.append(output(name));
  return out;
}

py::object NativeStream::output(const std::string& name) {
  const auto bound = output_arrays_.find(name);
  const Tensor tensor = value_or_throw(stream_->output(name));
  if (bound != output_arrays_.end()) return bound->second;
  return array_from_tensor(name, tensor);
}

void add_stream_class(py::module_& m) {
  py::class_<NativeStream>(m, "Stream")
      .def("bind_input", &NativeStream::bind_input, "name"_a, "array"_a)
      .def("bind_input_address", &NativeStream::bind_input_address, "name"_a, "dtype"_a, "shape"_a, "address"_a)
      .def("bind_zeros", &NativeStream::bind_zeros, "name"_a, "shape"_a)
      .def("bind_output", &NativeStream::bind_output, "name"_a, "array"_a)
      .def("bind_output_address", &NativeStream::bind_output_address, "name"_a, "dtype"_a, "shape"_a, "address"_a)
      .def("carry", &NativeStream::carry, "output"_a, "input"_a)
      .def("reset", &NativeStream::reset)
      .def("run", &NativeStream::run, "feeds"_a, "output_names"_a = py::none(), "run_options"_a = nullptr)
      .def("output", &NativeStream::output, "name"_a)
      .def_property_readonly("calls", &NativeStream::calls);
}

}  // namespace kiln::python
