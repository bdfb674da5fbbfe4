// kiln._kiln.Generator: kiln::Generator bound as it is (tokenize, detokenize, generate with a
// per-token callback, logits); kiln.Generator (python/kiln/generator.py) makes generate() a Python
// generator over it.
#pragma once

#include <pybind11/pybind11.h>

namespace kiln::python {

void add_generator_class(pybind11::module_& m);

}  // namespace kiln::python
