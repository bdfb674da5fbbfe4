// cpu kernel for CumSum: running sums along the axis, forward or reversed, inclusive or exclusive,
// in the element type (float for float16 and bfloat16), as the reference adds. Each outer block
// walks the axis once with its inner elements as a contiguous, vectorisable row; blocks (or, with
// one block, the inner elements) are spread over OpenMP threads.
#include <vector>

#include "kiln/ops/family_support.h"
#include "kiln/ops/op_helpers.h"
#include "kiln/providers/cpu/cpu_kernels.h"
#include "kiln/providers/cpu/onednn_support.h"

namespace kiln::providers::cpu {
namespace {

Result<ops::Kernel> build_cumsum(const ir::Node& node) {
  const std::vector<int64_t> dims = input_dims(node, 0);
  const bool exclusive = node.attr_int("exclusive", 0) != 0, reverse = node.attr_int("reverse", 0) != 0;
  const DType dtype = node.inputs[0]->type.dtype;
  return ops::Kernel([=](ops::KernelContext& ctx) -> Status {
    KILN_ASSIGN_OR_RETURN(const std::vector<int64_t> axis_values, ops::read_int64s(*ctx.input(1), "axis"));
    if (axis_values.size() != 1) return ctx.error("axis must be a scalar");
    KILN_ASSIGN_OR_RETURN(const int64_t axis, ops::normalize_axis(axis_values[0], static_cast<int64_t>(dims.size())));
    const int64_t length = dims[static_cast<size_t>(axis)];
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= dims[static_cast<size_t>(d)];
    for (size_t d = static_cast<size_t>(axis) + 1; d < dims.size(); ++d) inner *= dims[d];
    ops::dispatch<ops::NumericTypes>(dtype, [&]<class T>() {
      using Sum = ops::Compute<T>;
      const T* x = ctx.input(0)->data<T>();
      T* y = ctx.output(0)->data<T>();
      // Columns [begin, end) of outer block o.
      auto scan = [&](int64_t o, int64_t begin, int64_t end, std::vector<Sum>& sum) {
        std::fill(sum.begin(), sum.end(), Sum(0));
        for (int64_t step = 0; step < length; ++step) {
          const int64_t at = (o * length + (reverse ? length - 1 - step : step)) * inner;
          for (int64_t i = begin; i < end; ++i) {
            Sum& s = sum[static_cast<size_t>(i - begin)];
            if (exclusive) {
              y[at + i] = ops::store<T>(s);
              s += ops::load(x[at + i]);
            } else {
              s += ops::load(x[at + i]);
              y[at + i] = ops::store<T>(s);
            }
          }
        }
      };
      const bool parallel = outer * length * inner > 16384;
      if (outer > 1 || !parallel) {
#pragma omp parallel if (parallel)
        {
          std::vector<Sum> sum(static_cast<size_t>(inner));
#pragma omp for schedule(static)
          for (int64_t o = 0; o < outer; ++o) scan(o, 0, inner, sum);
        }
        return;
      }
      constexpr int64_t kColumns = 256;
      const int64_t chunks = (inner + kColumns - 1) / kColumns;
#pragma omp parallel
      {
        std::vector<Sum> sum(static_cast<size_t>(kColumns));
#pragma omp for schedule(static)
        for (int64_t c = 0; c < chunks; ++c) scan(0, c * kColumns, std::min(inner, (c + 1) * kColumns), sum);
      }
    });
    return Status::ok();
  });
}

}  // namespace

void add_cumsum_kernels(CpuKernelTable& table) { table["CumSum"] = node_only([](const ir::Node& node) { return numeric_tensor(node, 0); }, build_cumsum); }

}  // namespace kiln::providers::cpu
