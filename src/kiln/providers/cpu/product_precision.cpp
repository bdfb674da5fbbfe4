// Reduced-precision products' data types and input conversions (see product_precision.h).
#include "kiln/providers/cpu/product_precision.h"

#include <algorithm>
#include <vector>

#include "kiln/providers/cpu/onednn_support.h"

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

memory::desc product_activation_desc(const memory::desc& desc, ops::Precision precision) {
  if (precision == ops::Precision::kFp32) return desc;
  const memory::data_type type = precision == ops::Precision::kInt8 ? memory::data_type::u8 : product_data_type(precision);
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

}  // namespace kiln::providers::cpu
