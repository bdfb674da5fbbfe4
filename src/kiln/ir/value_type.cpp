// type_of(Value).
#include "kiln/ir/value_type.h"

namespace kiln::ir {

TensorType type_of(const kiln::Value& value) {
  switch (value.kind()) {
    case kiln::Value::Kind::kTensor: return TensorType{value.tensor().dtype(), Shape::from_static(value.tensor().shape())};
    case kiln::Value::Kind::kSequence: return TensorType::sequence_of(TensorType{value.element_dtype()});
    case kiln::Value::Kind::kOptional:
      return TensorType::optional_of(value.has_element() ? type_of(value.element()) : TensorType{});
  }
  return {};
}

}  // namespace kiln::ir
