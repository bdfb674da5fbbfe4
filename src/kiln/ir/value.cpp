// kiln::Value constructors and description.
#include "kiln/value.h"

namespace kiln {

Value Value::sequence(DType element_dtype, std::vector<Tensor> elements) {
  Value v;
  v.kind_ = Kind::kSequence;
  v.element_dtype_ = element_dtype;
  v.elements_ = std::move(elements);
  return v;
}

Value Value::empty_optional() {
  Value v;
  v.kind_ = Kind::kOptional;
  return v;
}

Value Value::optional_of(Value element) {
  Value v;
  v.kind_ = Kind::kOptional;
  v.element_ = std::make_shared<const Value>(std::move(element));
  return v;
}

std::string Value::describe() const {
  switch (kind_) {
    case Kind::kTensor: return std::string(dtype_name(tensor_.dtype())) + shape_to_string(tensor_.shape());
    case Kind::kSequence:
      return "seq(" + std::string(dtype_name(element_dtype_)) + ")[" + std::to_string(elements_.size()) + " elements]";
    case Kind::kOptional: return "optional(" + (element_ ? element_->describe() : std::string("none")) + ")";
  }
  return "?";
}

}  // namespace kiln
