// kiln._kiln.Stream: kiln::Stream (stream.h) for Python, under kiln.Stream and onnxruntime-style
// IOBinding (python/kiln/stream.py). Bound input arrays are read in place and bound output arrays
// written in place (both kept alive while bound); a call releases the GIL.
#pragma once

#include <pybind11/pybind11.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kiln/session.h"

namespace kiln::python {

namespace py = pybind11;

class NativeStream {
 public:
  explicit NativeStream(std::unique_ptr<Stream> stream, const Session& session);

  // Binds a numpy array (read in place when C-ordered, aligned and native, else copied once), or
  // unbinds the input when `array` is None.
  void bind_input(const std::string& name, py::handle array);
  // Binds `count` elements of `dtype` (a numpy dtype) at `address`, of `shape`: the caller's memory
  // (onnxruntime's bind_input with a buffer_ptr).
  void bind_input_address(const std::string& name, py::handle dtype, const std::vector<int64_t>& shape, uintptr_t address);
  // Binds a writable, C-ordered, aligned numpy array of the output's dtype that each call writes
  // into; None unbinds the output.
  void bind_output(const std::string& name, py::handle array);
  void bind_output_address(const std::string& name, py::handle dtype, const std::vector<int64_t>& shape, uintptr_t address);
  void carry(const std::string& output, const std::string& input);
  void bind_zeros(const std::string& name, const std::vector<int64_t>& shape);
  void reset();
  // Binds the arrays of `feeds`, runs once, and returns the outputs named (all when None) as
  // arrays: a bound output's own array, else an array over the stream's buffer (no copy).
  py::list run(const py::dict& feeds, const std::optional<std::vector<std::string>>& output_names, const RunOptions* run_options);
  py::object output(const std::string& name);
  int64_t calls() const { return stream_->calls(); }

 private:
  std::unique_ptr<Stream> stream_;
  std::vector<std::string> output_names_;
  std::map<std::string, std::vector<py::object>> input_arrays_;  // what bound inputs read, by name
  std::map<std::string, py::object> output_arrays_;              // bound output arrays, by name
};

// Registers kiln._kiln.Stream.
void add_stream_class(py::module_& m);

}  // namespace kiln::python
