// kiln::Value: what flows along a graph edge: a tensor, a sequence of tensors, or an optional
// (empty, or holding a tensor or a sequence). Copies share tensor storage, as Tensor copies do.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "kiln/tensor.h"

namespace kiln {

class Value {
 public:
  enum class Kind { kTensor, kSequence, kOptional };

  Value() = default;  // an undefined tensor
  Value(Tensor tensor) : tensor_(std::move(tensor)) {}  // NOLINT: a tensor is a value
  static Value sequence(DType element_dtype, std::vector<Tensor> elements);
  static Value empty_optional();
  static Value optional_of(Value element);

  Kind kind() const { return kind_; }
  bool is_tensor() const { return kind_ == Kind::kTensor; }
  Tensor& tensor() { return tensor_; }  // kTensor
  const Tensor& tensor() const { return tensor_; }
  DType element_dtype() const { return element_dtype_; }  // kSequence
  const std::vector<Tensor>& elements() const { return elements_; }  // kSequence
  bool has_element() const { return element_ != nullptr; }  // kOptional
  const Value& element() const { return *element_; }      // kOptional with an element
  // "float[2,3]", "seq(float)[3 elements]", "optional(none)", "optional(float[2])".
  std::string describe() const;

 private:
  Kind kind_ = Kind::kTensor;
  Tensor tensor_;
  DType element_dtype_ = DType::kUndefined;
  std::vector<Tensor> elements_;
  std::shared_ptr<const Value> element_;
};

}  // namespace kiln
