// kiln._kiln's functions on .kiln artifacts without a session: verify (verification.h), sign and
// make a key pair (signing.h). python/kiln/artifacts.py wraps them as kiln.verify, kiln.sign,
// kiln.generate_key_pair and kiln.compile.
#pragma once

#include <pybind11/pybind11.h>

namespace kiln::python {

void add_artifact_functions(pybind11::module_& m);

}  // namespace kiln::python
