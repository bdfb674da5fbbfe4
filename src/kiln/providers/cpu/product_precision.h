// What the cpu provider's products (convolutions, matrix products) need to compute in a reduced
// precision (ops/numeric_precision.h): the oneDNN data types a precision reads activations and
// weights in, the conversion of a float32 activation into the type its primitive reads (bfloat16:
// a reorder; int8: dynamic quantization), made on each run into the calling thread's scratch, and
// the int8 product's run-time attributes (the input's zero point, the output's scales). An
// activation kept bfloat16 between bf16 products, or uint8 between int8 products, is read and
// written as it is stored.
#pragma once

#include <dnnl.hpp>
#include <cstdint>
#include <optional>
#include <vector>

#include "kiln/ir/graph.h"
#include "kiln/providers/cpu/onednn_support.h"

#include "kiln/ops/activation_calibration.h"
#include "kiln/ops/numeric_precision.h"

namespace kiln::providers::cpu {

// The data type a product of `precision` reads its weights in (f32, bf16, s8); its activations
// are of the same type but for int8, whose are u8 (product_activation_desc).
dnnl::memory::data_type product_data_type(ops::Precision precision);

// `desc` with its data type replaced (same dims, layout and strides in elements).
dnnl::memory::desc with_data_type(const dnnl::memory::desc& desc, dnnl::memory::data_type type);

// `desc` (float32) in the element type of `value`'s storage: bfloat16 or uint8 for a value kept so
// between bf16 or int8 products (CpuProvider::keeps_reduced_activations), else unchanged.
dnnl::memory::desc in_stored_type(const dnnl::memory::desc& desc, const ir::Value& value);

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

// An int8 product's run-time quantization: its float32 input quantized per tensor to uint8, with the
// scale and zero point calibrated at compile time (the node's input_scale and input_zero_point:
// static quantization) or as ONNX's DynamicQuantizeLinear computes them from each run's range
// ([min(x, 0), max(x, 0)] over 255 steps, zero point round(-min / scale)); round half to even,
// saturating, as QuantizeLinear. Then the attributes that undo the scales:
// output channel n is scaled by input_scale x weight_scales[n], after the zero point is taken off.
// Three forms: a calibrated input's scale and zero point fixed in the primitive with the weight
// scales (nothing bound per run); the weight scales fixed and the run's input scale a first
// post-op (a binary multiply by a run-time scalar: oneDNN's brgemm int8 kernels take only fixed
// output scales); or both as run-time output scales (its int8 gemm, where the others have only
// reference code: AVX2 and AVX-512 without VNNI with a residual sum).
class Int8Product {
 public:
  enum class Form { kFixedScales, kInputScalePostOp, kRuntimeOutputScales };
  // The form to try first for `node`: kFixedScales when its input is calibrated.
  static Form first_form(const ir::Node& node);
  Int8Product() = default;
  // With `node`'s weight_scales attribute (ops::kWeightScalesAttribute) and calibrated input, if
  // any (kFixedScales needs one).
  Int8Product(const ir::Node& node, Form form);
  bool active() const { return !weight_scales_.empty(); }
  const std::vector<float>& weight_scales() const { return weight_scales_; }
  // The post-ops that come first in the primitive of this form (the input scale's multiply, for an
  // output of `output_rank` dims), and the output scales and input zero point it is made with (per
  // channel of the output dim `output_mask` names); the epilogue's post-ops follow `first`.
  dnnl::post_ops first_post_ops(size_t output_rank) const;
  void add_attributes(dnnl::primitive_attr& attr, int output_mask) const;
  // Quantizes `count` floats at `input` into the run scratch's second slot (NaN to the zero point),
  // element by element in their own layout, and points `args`' scale and zero point arguments at
  // this run's values; returns the quantized bytes (valid until that slot's next use). An input
  // kept uint8 (stored in the node's calibrated quantization) is returned as it is.
  const void* quantize(const void* input, int64_t count, PrimitiveArgs& args);
  // oneDNN scales the bias with the product (dst = scale x (acc + bias)): the bias (one per output
  // channel) divided by this run's output scales, for the primitive to scale back; with a calibrated
  // input rounded to an integer there, the int32 bias of ONNX's QDQ form (QLinearConv's, and Kiln's
  // own export: quantized_export.h). After quantize().
  const float* prescaled_bias(const float* bias);

 private:
  Form form_ = Form::kRuntimeOutputScales;
  std::vector<float> weight_scales_, output_scales_, bias_;
  std::optional<ops::Uint8Quantization> calibrated_;
  bool stored_uint8_ = false;  // the input is a value kept uint8 between int8 products
  float input_scale_ = 1;
  int32_t zero_point_ = 0;
  dnnl::memory output_scales_memory_, input_scale_memory_, zero_point_memory_;
};

}  // namespace kiln::providers::cpu
