// What the cpu provider's products (convolutions, matrix products) need to compute in a reduced
// precision (ops/numeric_precision.h): the oneDNN data types a precision reads activations and
// weights in, and the conversion of a float32 activation into the type its primitive reads, made
// on each run into the calling thread's scratch.
#pragma once

#include <dnnl.hpp>
#include <optional>

#include "kiln/ops/numeric_precision.h"

namespace kiln::providers::cpu {

// The data type a product of `precision` reads its activations and its weights in (f32, bf16).
dnnl::memory::data_type product_data_type(ops::Precision precision);

// `desc` with its data type replaced (same dims, layout and strides in elements).
dnnl::memory::desc with_data_type(const dnnl::memory::desc& desc, dnnl::memory::data_type type);

// `desc` for a primitive's activation of `precision`: unchanged for float32; otherwise that type,
// dense in the same layout when `desc` is a strided view (a transposed operand) of plain dims.
dnnl::memory::desc product_activation_desc(const dnnl::memory::desc& desc, ops::Precision precision);

// An input a primitive reads in another type or layout than its storage's, converted on each run
// (a reorder) into the run scratch (onednn_support.h: run_scratch_floats). Inactive when the
// primitive reads the storage as it is.
class InputConversion {
 public:
  InputConversion() = default;
  InputConversion(const dnnl::memory::desc& stored, const dnnl::memory::desc& read);
  bool active() const { return reorder_.has_value(); }
  // The bytes the primitive reads this run: `input` (the input's storage), or its converted copy (valid
  // until the next use of the run scratch on this thread).
  const void* data_for_run(const void* input, dnnl::stream& stream);

 private:
  std::optional<dnnl::reorder> reorder_;
  dnnl::memory stored_, converted_;
};

}  // namespace kiln::providers::cpu
