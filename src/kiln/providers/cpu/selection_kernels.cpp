// cpu kernels for the ops that keep what a condition selects: NonZero (the coordinates of every
// non-zero element; NaN counts as non-zero, -0 as zero, as in the reference) and Compress (the
// slices along an axis, or the elements of the flattened input, whose condition is true; a
// condition shorter than the axis keeps nothing past its end). Any fixed-size dtype. NonZero
// counts per chunk on OpenMP threads and then writes each chunk's coordinates at its prefix sum;
// Compress copies kept slices with memcpy, over threads.
#include <cstring>
#include <vector>

#include "kiln/ops/family_support.h"
#include "kiln/ops/op_helpers.h"
#include "kiln/providers/cpu/cpu_kernels.h"

namespace kiln::providers::cpu {
namespace {

constexpr int64_t kChunk = 1 << 14;

Result<ops::Kernel> build_nonzero(const ir::Node& node) {
  ops::Kernel kernel;
  ops::dispatch<ops::NumericOrBoolTypes>(node.inputs[0]->type.dtype, [&]<class T>() {
    kernel = [](ops::KernelContext& ctx) -> Status {
      const Tensor& x = *ctx.input(0);
      Tensor& out = *ctx.output(0);
      const T* v = x.data<T>();
      const int64_t n = x.element_count(), chunks = (n + kChunk - 1) / kChunk;
      auto nonzero = [](T e) {
        if constexpr (std::is_same_v<T, bool>) return e;
        else return ops::load(e) != 0;
      };
      std::vector<int64_t> before(static_cast<size_t>(chunks) + 1, 0);
#pragma omp parallel for schedule(static) if (chunks > 1)
      for (int64_t c = 0; c < chunks; ++c) {
        int64_t count = 0;
        for (int64_t i = c * kChunk; i < std::min(n, (c + 1) * kChunk); ++i) count += nonzero(v[i]) ? 1 : 0;
        before[static_cast<size_t>(c) + 1] = count;
      }
      for (size_t c = 1; c < before.size(); ++c) before[c] += before[c - 1];
      const int64_t total = before.back();
      if (out.element_count() != total * x.rank())
        return ctx.error("output holds " + shape_to_string(out.shape()) + ", the input has " + std::to_string(total) +
                         " non-zero elements");
      const std::vector<int64_t>& dims = x.shape();
      int64_t* y = out.data<int64_t>();
#pragma omp parallel for schedule(static) if (chunks > 1)
      for (int64_t c = 0; c < chunks; ++c) {
        int64_t j = before[static_cast<size_t>(c)];
        for (int64_t i = c * kChunk; i < std::min(n, (c + 1) * kChunk); ++i) {
          if (!nonzero(v[i])) continue;
          for (int64_t d = static_cast<int64_t>(dims.size()) - 1, rest = i; d >= 0; --d) {
            y[d * total + j] = rest % dims[static_cast<size_t>(d)];
            rest /= dims[static_cast<size_t>(d)];
          }
          ++j;
        }
      }
      return Status::ok();
    };
  });
  return kernel;
}

Result<ops::Kernel> build_compress(const ir::Node& node) {
  const bool has_axis = node.has_attr("axis");
  const int64_t written_axis = node.attr_int("axis", 0);
  const size_t bytes = dtype_size(node.inputs[0]->type.dtype);
  return ops::Kernel([=](ops::KernelContext& ctx) -> Status {
    const Tensor& x = *ctx.input(0);
    const Tensor& condition = *ctx.input(1);
    int64_t outer = 1, length = x.element_count(), inner = 1;
    if (has_axis) {
      KILN_ASSIGN_OR_RETURN(const int64_t axis, ops::normalize_axis(written_axis, x.rank()));
      length = x.shape()[static_cast<size_t>(axis)];
      for (int64_t d = 0; d < axis; ++d) outer *= x.shape()[static_cast<size_t>(d)];
      for (size_t d = static_cast<size_t>(axis) + 1; d < x.shape().size(); ++d) inner *= x.shape()[d];
    }
    std::vector<int64_t> keep;
    const bool* c = condition.data<bool>();
    for (int64_t i = 0; i < std::min(condition.element_count(), length); ++i)
      if (c[i]) keep.push_back(i);
    const auto kept = static_cast<int64_t>(keep.size());
    Tensor& out = *ctx.output(0);
    if (out.element_count() != outer * kept * inner)
      return ctx.error("output holds " + shape_to_string(out.shape()) + ", the condition keeps " + std::to_string(kept) + " of " +
                       std::to_string(length));
    const auto* src = static_cast<const char*>(x.raw_data());
    auto* dst = static_cast<char*>(out.raw_data());
    const size_t slice = static_cast<size_t>(inner) * bytes;
    const int64_t slices = outer * kept;
#pragma omp parallel for schedule(static) if (slices > 1 && out.byte_size() > (1 << 16))
    for (int64_t s = 0; s < slices; ++s) {
      const int64_t o = s / kept, j = s % kept;
      std::memcpy(dst + static_cast<size_t>(s) * slice, src + static_cast<size_t>(o * length + keep[static_cast<size_t>(j)]) * slice,
                  slice);
    }
    return Status::ok();
  });
}

}  // namespace

void add_selection_kernels(CpuKernelTable& table) {
  table["NonZero"] = node_only([](const ir::Node& node) { return fixed_size_tensor(node, 0); }, build_nonzero);
  table["Compress"] = node_only(
      [](const ir::Node& node) {
        const ir::Value* condition = node.input(1);
        if (!condition || !condition->type.is_tensor() || condition->type.dtype != DType::kBool)
          return Capability::no("Compress with a condition that is not a bool tensor");
        return fixed_size_tensor(node, 0);
      },
      build_compress);
}

}  // namespace kiln::providers::cpu
