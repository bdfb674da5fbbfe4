// The IR type of a runtime value: tensors get their concrete shape, sequences and optionals their
// element type (element shapes may differ, so they stay unknown).
#pragma once

#include "kiln/ir/shape.h"
#include "kiln/value.h"

namespace kiln::ir {

TensorType type_of(const kiln::Value& value);

}  // namespace kiln::ir
