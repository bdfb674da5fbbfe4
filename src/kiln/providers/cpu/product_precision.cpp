// Reduced-precision products' data types and input conversions (see product_precision.h).
#include "kiln/providers/cpu/product_precision.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "kiln/providers/cpu/onednn_support.h"
#include "kiln/providers/cpu/vector_math.h"

namespace kiln::providers::cpu {

using dnnl::memory;

memory::data_type product_data_type(ops::Precision precision) {
  switch (precision) {
    case ops::Precision::kBf16: return memory::data_type::bf16;
    case ops::Precision::kInt8: return memory::data_type::s8;
    case ops::Precision::kFp32: break;
  }
  return memory::data_type::f32;
}

memory::desc with_data_type(const memory::desc& desc, memory::data_type type) {
  dnnl_memory_desc_t data = desc.data;
  data.data_type = static_cast<dnnl_data_type_t>(type);
  return memory::desc(data);
}

memory::desc in_stored_type(const memory::desc& desc, const ir::Value& value) {
  switch (value.type.dtype) {
    case DType::kBFloat16: return with_data_type(desc, memory::data_type::bf16);
    case DType::kUInt8: return with_data_type(desc, memory::data_type::u8);
    default: return desc;
  }
}

memory::desc product_activation_desc(const memory::desc& desc, ops::Precision precision) {
  if (precision == ops::Precision::kFp32) return desc;
  // int8 quantizes the storage element by element: the same layout and strides, in uint8.
  if (precision == ops::Precision::kInt8) return with_data_type(desc, memory::data_type::u8);
  const memory::data_type type = product_data_type(precision);
  const dnnl_memory_desc_t& d = desc.data;
  if (d.format_kind == dnnl_blocked && d.format_desc.blocking.inner_nblks == 0) {
    // A plain view: dense row-major in the new type unless it already is dense in some order.
    std::vector<int64_t> strides(d.ndims, 1);
    for (int i = d.ndims - 1; i > 0; --i) strides[i - 1] = strides[i] * std::max<int64_t>(d.dims[i], 1);
    bool row_major = true;
    for (int i = 0; i < d.ndims; ++i) row_major = row_major && (d.dims[i] == 1 || d.format_desc.blocking.strides[i] == strides[i]);
    if (!row_major) return memory::desc(desc.dims(), type, memory::dims(strides.begin(), strides.end()));
  }
  return with_data_type(desc, type);
}

InputConversion::InputConversion(const memory::desc& stored, const memory::desc& read) {
  if (stored == read) return;
  stored_ = memory(stored, cpu_engine(), nullptr);
  converted_ = memory(read, cpu_engine(), nullptr);
  reorder_ = dnnl::reorder(stored_, converted_);
}

const void* InputConversion::data_for_run(const void* input, dnnl::stream& stream) {
  if (!reorder_) return input;
  void* scratch = run_scratch_floats((converted_.get_desc().get_size() + sizeof(float) - 1) / sizeof(float));
  stored_.set_data_handle(const_cast<void*>(input));
  converted_.set_data_handle(scratch);
  reorder_->execute(stream, stored_, converted_);
  return scratch;
}

Int8Product::Form Int8Product::first_form(const ir::Node& node) {
  return node.attributes.count(ops::kInputScaleAttribute) ? Form::kFixedScales : Form::kInputScalePostOp;
}

Int8Product::Int8Product(const ir::Node& node, Form form)
    : form_(form),
      weight_scales_(node.attr_floats(ops::kWeightScalesAttribute)),
      calibrated_(ops::input_quantization(node)),
      stored_uint8_(node.inputs[0]->type.dtype == DType::kUInt8) {
  output_scales_.resize(weight_scales_.size());
  const auto channels = static_cast<int64_t>(weight_scales_.size());
  output_scales_memory_ = memory(memory::desc({channels}, memory::data_type::f32, memory::format_tag::a), cpu_engine(), nullptr);
  input_scale_memory_ = memory(memory::desc({1}, memory::data_type::f32, memory::format_tag::a), cpu_engine(), nullptr);
  zero_point_memory_ = memory(memory::desc({1}, memory::data_type::s32, memory::format_tag::a), cpu_engine(), nullptr);
  if (form_ == Form::kFixedScales && !calibrated_) form_ = Form::kInputScalePostOp;
  if (form_ == Form::kFixedScales)
    for (size_t n = 0; n < weight_scales_.size(); ++n) output_scales_[n] = calibrated_->scale * weight_scales_[n];
}

dnnl::post_ops Int8Product::first_post_ops(size_t output_rank) const {
  dnnl::post_ops post_ops;
  if (form_ == Form::kInputScalePostOp)
    post_ops.append_binary(dnnl::algorithm::binary_mul, memory::desc(memory::dims(output_rank, 1), memory::data_type::f32,
                                                                     memory::dims(output_rank, 1)));
  return post_ops;
}

void Int8Product::add_attributes(dnnl::primitive_attr& attr, int output_mask) const {
  if (form_ == Form::kFixedScales) {
    attr.set_output_scales(output_mask, output_scales_);
    attr.set_zero_points(DNNL_ARG_SRC, 0, {calibrated_->zero_point});
    return;
  }
  if (form_ == Form::kInputScalePostOp) {
    attr.set_output_scales(output_mask, weight_scales_);
  } else {
    attr.set_output_scales(output_mask, {DNNL_RUNTIME_F32_VAL});
  }
  attr.set_zero_points(DNNL_ARG_SRC, 0, {DNNL_RUNTIME_S32_VAL});
}

const void* Int8Product::quantize(const void* stored, int64_t count, PrimitiveArgs& args) {
  // Both passes over chunks of the input, a chunk per thread (vector_math.cpp's loops vectorise).
  constexpr int64_t kChunk = int64_t{1} << 14;
  const int64_t chunks = (count + kChunk - 1) / kChunk;
  const auto* input = static_cast<const float*>(stored);
  ops::Uint8Quantization q;
  if (calibrated_) {
    q = *calibrated_;
  } else {
    float low = 0, high = 0;
#pragma omp parallel for reduction(min : low) reduction(max : high) if (chunks > 1)
    for (int64_t c = 0; c < chunks; ++c) extend_range(input + c * kChunk, std::min(kChunk, count - c * kChunk), low, high);
    q = ops::uint8_quantization(low, high);  // a range of zeros (or NaN) quantizes to zeros
  }
  const float scale = q.scale, zero = static_cast<float>(q.zero_point);
  zero_point_ = q.zero_point;
  const void* quantized = stored;  // a uint8 input is stored in its calibrated quantization already
  if (!stored_uint8_) {
    // The second slot: a convolution reorders the quantized input into the layout it reads (first slot).
    auto* out = reinterpret_cast<uint8_t*>(run_scratch_floats(static_cast<size_t>((count + 3) / 4), ScratchSlot::kSecond));
#pragma omp parallel for if (chunks > 1)
    for (int64_t c = 0; c < chunks; ++c) quantize_uint8(input + c * kChunk, std::min(kChunk, count - c * kChunk), scale, zero, out + c * kChunk);
    quantized = out;
  }
  if (form_ == Form::kFixedScales) return quantized;  // the primitive holds the scales and zero point
  for (size_t n = 0; n < weight_scales_.size(); ++n) output_scales_[n] = scale * weight_scales_[n];
  input_scale_ = scale;
  // The memories are re-pointed on each run: this object may have moved since it was made.
  zero_point_memory_.set_data_handle(&zero_point_);
  args.set(DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, zero_point_memory_);
  if (form_ == Form::kInputScalePostOp) {
    input_scale_memory_.set_data_handle(&input_scale_);
    args.set(DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1, input_scale_memory_);
  } else {
    output_scales_memory_.set_data_handle(output_scales_.data());
    args.set(DNNL_ARG_ATTR_OUTPUT_SCALES, output_scales_memory_);
  }
  return quantized;
}

const float* Int8Product::prescaled_bias(const float* bias) {
  bias_.resize(output_scales_.size());
  for (size_t n = 0; n < bias_.size(); ++n) bias_[n] = calibrated_ ? std::nearbyint(bias[n] / output_scales_[n]) : bias[n] / output_scales_[n];
  return bias_.data();
}

}  // namespace kiln::providers::cpu
