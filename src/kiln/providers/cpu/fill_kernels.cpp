// cpu kernels for the ops that fill an output from a few values: ConstantOfShape of any
// fixed-size dtype (the node's one value broadcast-copied into the output, one fill per row, rows
// over OpenMP threads), EyeLike (zeros and a diagonal of ones), Range of floats (start + i * delta,
// as the reference computes it, not a running sum) and OneHot (the off value everywhere, the on
// value at each index, rows over threads). Integer outputs of shape subgraphs are shape
// arithmetic instead (shape_arithmetic.h).
#include <cstring>

#include "kiln/ops/data_movement.h"
#include "kiln/ops/family_support.h"
#include "kiln/ops/onehot.h"
#include "kiln/ops/op_helpers.h"
#include "kiln/providers/cpu/broadcast_copy.h"
#include "kiln/providers/cpu/cpu_kernels.h"

namespace kiln::providers::cpu {
namespace {

Capability constant_of_shape_supports(const ir::Node& node) {
  const Result<Tensor> value = ops::fill_value(node);
  if (!value.is_ok()) return Capability::no(value.status().message());
  if (value.value().dtype() == DType::kString) return Capability::no("ConstantOfShape of strings");
  return Capability::yes();
}

Result<ops::Kernel> build_constant_of_shape(const ir::Node& node) {
  KILN_ASSIGN_OR_RETURN(Tensor value, ops::fill_value(node));
  return ops::Kernel([value = std::move(value)](ops::KernelContext& ctx) -> Status {
    Tensor& out = *ctx.output(0);
    if (out.dtype() != value.dtype()) return ctx.error("the output's dtype is not the value's");
    if (out.rank() == 0) {
      std::memcpy(out.raw_data(), value.raw_data(), value.byte_size());
      return Status::ok();
    }
    broadcast_copy(value, out);
    return Status::ok();
  });
}

// Output 0 is a tensor of a dtype in List.
template <class List>
Capability output_in(const ir::Node& node) {
  const ir::Value* y = node.outputs.empty() ? nullptr : node.outputs[0];
  if (!y || !y->type.is_tensor() || !ops::list_has(List{}, y->type.dtype))
    return Capability::no(node.op_type + " giving " + (y ? dtype_name(y->type.dtype) : std::string("nothing")));
  return Capability::yes();
}

Result<ops::Kernel> build_eye_like(const ir::Node& node) {
  const int64_t k = node.attr_int("k", 0);
  ops::Kernel kernel;
  ops::dispatch<ops::NumericOrBoolTypes>(node.outputs[0]->type.dtype, [&]<class T>() {
    kernel = [k](ops::KernelContext& ctx) {
      Tensor& out = *ctx.output(0);
      std::memset(out.raw_data(), 0, out.byte_size());
      const int64_t rows = out.shape()[0], cols = out.shape()[1];
      T* y = out.data<T>();
      for (int64_t r = std::max<int64_t>(0, -k); r < rows && r + k < cols; ++r) y[r * cols + r + k] = ops::from_double<T>(1.0);
      return Status::ok();
    };
  });
  return kernel;
}

Result<ops::Kernel> build_range(const ir::Node& node) {
  ops::Kernel kernel;
  ops::dispatch<ops::TypeList<float, double>>(node.outputs[0]->type.dtype, [&]<class T>() {
    kernel = [](ops::KernelContext& ctx) {
      Tensor& out = *ctx.output(0);
      const T start = ctx.input(0)->data<T>()[0], delta = ctx.input(2)->data<T>()[0];
      T* y = out.data<T>();
      const int64_t n = out.element_count();
#pragma omp parallel for schedule(static) if (n > 16384)
      for (int64_t i = 0; i < n; ++i) y[i] = static_cast<T>(start + static_cast<T>(i) * delta);
      return Status::ok();
    };
  });
  return kernel;
}

Capability onehot_supports(const ir::Node& node) {
  for (size_t i = 0; i < 2; ++i) {
    const ir::Value* v = node.input(i);
    if (!v || !v->type.is_tensor() || !ops::list_has(ops::NumericTypes{}, v->type.dtype))
      return Capability::no("OneHot indices and depth must be numeric tensors");
  }
  return fixed_size_tensor(node, 2);
}

Result<ops::Kernel> build_onehot(const ir::Node& node) {
  const bool wrap_negative = node.opset_version >= 11;  // before, negative indices are out of range
  const int64_t written_axis = node.attr_int("axis", -1);
  const size_t bytes = dtype_size(node.inputs[2]->type.dtype);
  return ops::Kernel([=](ops::KernelContext& ctx) -> Status {
    const Tensor& indices = *ctx.input(0);
    const Tensor& values = *ctx.input(2);
    Tensor& out = *ctx.output(0);
    if (values.element_count() != 2) return ctx.error("values must hold [off, on]");
    KILN_ASSIGN_OR_RETURN(const int64_t depth, ops::onehot_depth(ctx, *ctx.input(1)));
    KILN_ASSIGN_OR_RETURN(const int64_t axis, ops::normalize_axis(written_axis, out.rank()));
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= out.shape()[static_cast<size_t>(d)];
    for (size_t d = static_cast<size_t>(axis) + 1; d < out.shape().size(); ++d) inner *= out.shape()[d];
    const auto* off = static_cast<const char*>(values.raw_data());
    const char* on = off + bytes;
    auto* y = static_cast<char*>(out.raw_data());
#pragma omp parallel for schedule(static) if (outer > 1 && out.byte_size() > (1 << 16))
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t e = o * depth * inner; e < (o + 1) * depth * inner; ++e) std::memcpy(y + e * static_cast<int64_t>(bytes), off, bytes);
      for (int64_t i = 0; i < inner; ++i) {
        auto index = static_cast<int64_t>(element_as_double(indices, o * inner + i));
        if (index < 0 && wrap_negative) index += depth;
        if (index >= 0 && index < depth) std::memcpy(y + ((o * depth + index) * inner + i) * static_cast<int64_t>(bytes), on, bytes);
      }
    }
    return Status::ok();
  });
}

}  // namespace

void add_fill_kernels(CpuKernelTable& table) {
  table["ConstantOfShape"] = node_only(constant_of_shape_supports, build_constant_of_shape);
  table["EyeLike"] = node_only(output_in<ops::NumericOrBoolTypes>, build_eye_like);
  table["Range"] = node_only(output_in<ops::TypeList<float, double>>, build_range);
  table["OneHot"] = node_only(onehot_supports, build_onehot);
}

}  // namespace kiln::providers::cpu
