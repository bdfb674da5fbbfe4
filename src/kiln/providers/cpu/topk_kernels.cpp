// cpu kernel for TopK: each line along the axis is copied out once with its indices, the k first
// elements of TopK's order (ops/topk_order.h, shared with the reference) found by a partial sort,
// lines spread over OpenMP threads. Any numeric dtype; float16 and bfloat16 compare as float.
#include <algorithm>
#include <numeric>
#include <vector>

#include "kiln/ops/family_support.h"
#include "kiln/ops/op_helpers.h"
#include "kiln/ops/topk_order.h"
#include "kiln/providers/cpu/cpu_kernels.h"
#include "kiln/providers/cpu/onednn_support.h"

namespace kiln::providers::cpu {
namespace {

Result<ops::Kernel> build_topk(const ir::Node& node) {
  const std::vector<int64_t> dims = input_dims(node, 0);
  KILN_ASSIGN_OR_RETURN(const int64_t axis, ops::normalize_axis(node.attr_int("axis", -1), static_cast<int64_t>(dims.size())));
  const int64_t length = dims[static_cast<size_t>(axis)];
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= dims[static_cast<size_t>(d)];
  for (size_t d = static_cast<size_t>(axis) + 1; d < dims.size(); ++d) inner *= dims[d];
  const bool largest = node.attr_int("largest", 1) != 0;
  const DType dtype = node.inputs[0]->type.dtype;
  return ops::Kernel([=](ops::KernelContext& ctx) -> Status {
    const int64_t k = ctx.output(0)->shape()[static_cast<size_t>(axis)];
    if (k > length) return ctx.error("K (" + std::to_string(k) + ") is larger than the axis (" + std::to_string(length) + ")");
    int64_t* indices_out = ctx.output(1) ? ctx.output(1)->data<int64_t>() : nullptr;
    ops::dispatch<ops::NumericTypes>(dtype, [&]<class T>() {
      using Key = ops::Compute<T>;
      const bool descending = largest;  // a local for the OpenMP region: clang 14 rejects the capture there
      const T* x = ctx.input(0)->data<T>();
      T* values = ctx.output(0)->data<T>();
      const int64_t lines = outer * inner;
#pragma omp parallel if (lines > 1 && lines * length > 4096)
      {
        std::vector<Key> keys(static_cast<size_t>(length));
        std::vector<int64_t> order(static_cast<size_t>(length));
#pragma omp for schedule(static)
        for (int64_t line = 0; line < lines; ++line) {
          const int64_t o = line / inner, i = line % inner;
          const T* in = x + o * length * inner + i;
          for (int64_t j = 0; j < length; ++j) keys[static_cast<size_t>(j)] = ops::load(in[j * inner]);
          std::iota(order.begin(), order.end(), int64_t{0});
          std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](int64_t a, int64_t b) {
            return ops::topk_before(keys[static_cast<size_t>(a)], a, keys[static_cast<size_t>(b)], b, descending);
          });
          const int64_t base = o * k * inner + i;
          for (int64_t j = 0; j < k; ++j) {
            const int64_t from = order[static_cast<size_t>(j)];
            values[base + j * inner] = in[from * inner];
            if (indices_out) indices_out[base + j * inner] = from;
          }
        }
      }
    });
    return Status::ok();
  });
}

}  // namespace

void add_topk_kernels(CpuKernelTable& table) { table["TopK"] = node_only([](const ir::Node& node) { return numeric_tensor(node, 0); }, build_topk); }

}  // namespace kiln::providers::cpu
