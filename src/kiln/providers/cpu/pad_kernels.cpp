// cpu kernel for Pad (constant, reflect and edge; negative pads crop) over any fixed-size dtype.
// Output rows of the innermost dim are spread over OpenMP threads: a row whose outer coordinates
// fall in the padding is one fill; any other row is one memcpy of its source row plus the few
// padded positions at its ends. Pads and the constant are read when the kernel runs (they may be
// computed by the graph), with the reference's checks (ops/data_movement.h).
#include <algorithm>
#include <cstring>

#include "kiln/ops/data_movement.h"
#include "kiln/ops/family_support.h"
#include "kiln/providers/cpu/cpu_kernels.h"

namespace kiln::providers::cpu {
namespace {

template <class T>
void pad_rows(const T* src, const std::vector<int64_t>& in_shape, T* dst, const std::vector<int64_t>& out_shape,
              const std::vector<int64_t>& pads, ops::PadMode mode, T fill) {
  const size_t rank = in_shape.size();
  if (rank == 0) {
    dst[0] = src[0];
    return;
  }
  const int64_t n = in_shape[rank - 1], width = out_shape[rank - 1], begin = pads[rank - 1];
  int64_t rows = 1;
  for (size_t d = 0; d + 1 < rank; ++d) rows *= out_shape[d];
  if (rows == 0 || width == 0) return;
  std::vector<int64_t> in_strides(rank, 1);
  for (size_t d = rank - 1; d-- > 0;) in_strides[d] = in_strides[d + 1] * in_shape[d + 1];
  // Within a row: [0, lo) and [hi, width) are padding, [lo, hi) a copy of source positions lo - begin...
  const int64_t lo = std::clamp<int64_t>(begin, 0, width), hi = std::clamp<int64_t>(begin + n, lo, width);
  std::vector<int64_t> column(static_cast<size_t>(width));
  for (int64_t o = 0; o < width; ++o) column[static_cast<size_t>(o)] = ops::pad_source(o, begin, n, mode);
  const bool parallel = rows > 1 && rows * width * static_cast<int64_t>(sizeof(T)) >= (1 << 16);
#pragma omp parallel for schedule(static) if (parallel)
  for (int64_t row = 0; row < rows; ++row) {
    T* out = dst + row * width;
    int64_t offset = 0;
    bool padding = false;
    for (int64_t rest = row, d = static_cast<int64_t>(rank) - 2; d >= 0 && !padding; --d) {
      const auto du = static_cast<size_t>(d);
      const int64_t x = ops::pad_source(rest % out_shape[du], pads[du], in_shape[du], mode);
      rest /= out_shape[du];
      padding = x < 0;
      offset += x * in_strides[du];
    }
    if (padding) {
      std::fill_n(out, width, fill);
      continue;
    }
    const T* in = src + offset;
    auto edge = [&](int64_t from, int64_t to) {
      for (int64_t o = from; o < to; ++o) {
        const int64_t x = column[static_cast<size_t>(o)];
        out[o] = x < 0 ? fill : in[x];
      }
    };
    edge(0, lo);
    if (hi > lo) std::memcpy(out + lo, in + (lo - begin), static_cast<size_t>(hi - lo) * sizeof(T));
    edge(hi, width);
  }
}

Capability pad_supports(const ir::Node& node) {
  const ir::Value* x = node.input(0);
  if (!x || !x->type.is_tensor()) return Capability::no("Pad of a value that is not a tensor");
  if (!ops::list_has(ops::NumericOrBoolTypes{}, x->type.dtype)) return Capability::no(std::string("Pad of ") + dtype_name(x->type.dtype));
  if (!ops::pad_mode(node).is_ok()) return Capability::no("Pad mode '" + node.attr_string("mode") + "'");
  return Capability::yes();
}

Result<ops::Kernel> build_pad(const ir::Node& node) {
  KILN_ASSIGN_OR_RETURN(const ops::PadMode mode, ops::pad_mode(node));
  return ops::Kernel([mode](ops::KernelContext& ctx) -> Status {
    const Tensor& in = *ctx.input(0);
    Tensor& out = *ctx.output(0);
    KILN_ASSIGN_OR_RETURN(const std::vector<int64_t> pads, ops::run_time_pads(ctx, mode));
    Status status = ctx.error(std::string("Pad of ") + dtype_name(in.dtype()));
    ops::dispatch<ops::NumericOrBoolTypes>(in.dtype(), [&]<class T>() {
      Result<T> fill = ops::pad_constant<T>(ctx);
      status = fill.status();
      if (fill.is_ok()) pad_rows(in.data<T>(), in.shape(), out.data<T>(), out.shape(), pads, mode, fill.value());
    });
    return status;
  });
}

}  // namespace

void add_pad_kernels(CpuKernelTable& table) { table["Pad"] = node_only(pad_supports, build_pad); }

}  // namespace kiln::providers::cpu
