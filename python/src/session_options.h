// The options dict python/kiln/options.py builds -> kiln::SessionOptions. Every key is checked: an
// unknown key or a value of the wrong kind is an InvalidArgument naming it.
#pragma once

#include <pybind11/pybind11.h>

#include "kiln/session.h"

namespace kiln::python {

SessionOptions session_options_from_dict(const pybind11::dict& options);

}  // namespace kiln::python
