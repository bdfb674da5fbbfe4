// Kiln's Status as a Python exception: the C++ side throws StatusError, and the translator
// registered by register_status_errors raises the class of python/kiln/errors.py that matches the
// status code (kiln.InvalidModel, kiln.ShapeGuardFailure, ...), all under kiln.KilnError.
#pragma once

#include <pybind11/pybind11.h>

#include <stdexcept>

#include "kiln/status.h"

namespace kiln::python {

class StatusError : public std::runtime_error {
 public:
  explicit StatusError(Status status) : std::runtime_error(status.message()), status_(std::move(status)) {}
  const Status& status() const { return status_; }

 private:
  Status status_;
};

// Throws StatusError for a status that is not ok.
inline void check(const Status& status) {
  if (!status.is_ok()) throw StatusError(status);
}
template <class T>
T value_or_throw(Result<T> result) {
  check(result.status());
  return std::move(result).value();
}

// Installs the translator from StatusError to kiln.errors' classes.
void register_status_errors();

}  // namespace kiln::python
