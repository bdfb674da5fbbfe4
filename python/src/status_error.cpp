// StatusError -> the Python exception class of its code (python/kiln/errors.py).
#include "status_error.h"

namespace kiln::python {

namespace py = pybind11;

void register_status_errors() {
  py::register_exception_translator([](std::exception_ptr thrown) {
    try {
      if (thrown) std::rethrow_exception(thrown);
    } catch (const StatusError& e) {
      const py::object error_class = py::module_::import("kiln.errors").attr("error_class")(status_code_name(e.status().code()));
      PyErr_SetString(error_class.ptr(), e.status().message().c_str());
    }
  });
}

}  // namespace kiln::python
