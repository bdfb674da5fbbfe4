// The pad policy of shape profiles (see shape_padding.h).
#include "kiln/runtime/shape_padding.h"

#include <algorithm>
#include <cstring>

namespace kiln::runtime {
namespace {

// The smallest of the range's min, opt and max that holds `value` (value <= max).
int64_t bucket_of(const DimRange& r, int64_t value) {
  for (int64_t b : {r.min, r.opt, r.max})
    if (value <= b) return b;
  return r.max;
}

// Copies the leading block of `from` (shape `from_shape`) into `to` (shape `to_shape`), both
// row-major with elements of `elem` bytes: along each dim, min(from, to) entries.
void copy_block(const std::byte* from, const std::vector<int64_t>& from_shape, std::byte* to, const std::vector<int64_t>& to_shape,
                size_t elem) {
  const size_t rank = from_shape.size();
  if (rank == 0) {
    std::memcpy(to, from, elem);
    return;
  }
  std::vector<int64_t> from_stride(rank, 1), to_stride(rank, 1);
  for (size_t d = rank - 1; d-- > 0;) {
    from_stride[d] = from_stride[d + 1] * from_shape[d + 1];
    to_stride[d] = to_stride[d + 1] * to_shape[d + 1];
  }
  const int64_t inner = std::min(from_shape[rank - 1], to_shape[rank - 1]);
  std::vector<int64_t> index(rank, 0);
  std::vector<int64_t> extent(rank);
  for (size_t d = 0; d < rank; ++d) extent[d] = std::min(from_shape[d], to_shape[d]);
  if (std::find(extent.begin(), extent.end(), 0) != extent.end()) return;
  for (;;) {
    int64_t f = 0, t = 0;
    for (size_t d = 0; d + 1 < rank; ++d) {
      f += index[d] * from_stride[d];
      t += index[d] * to_stride[d];
    }
    std::memcpy(to + t * static_cast<int64_t>(elem), from + f * static_cast<int64_t>(elem), static_cast<size_t>(inner) * elem);
    size_t d = rank - 1;
    while (d-- > 0) {
      if (++index[d] < extent[d]) break;
      index[d] = 0;
    }
    if (d == static_cast<size_t>(-1)) return;
  }
}

}  // namespace

Tensor resized_copy(const Tensor& t, const std::vector<int64_t>& shape) {
  Tensor out = Tensor::allocate(t.dtype(), shape);
  copy_block(static_cast<const std::byte*>(t.raw_data()), t.shape(), static_cast<std::byte*>(out.raw_data()), shape,
             dtype_size(t.dtype()));
  return out;
}

Result<PaddedRun> pad_to_buckets(const ir::Graph& graph, const std::map<std::string, DimRange>& profile,
                                 const std::map<std::string, Value>& inputs) {
  PaddedRun run;
  run.inputs = inputs;
  for (const ir::Value* in : graph.inputs) {
    const auto given = inputs.find(in->name);
    if (given == inputs.end() || !given->second.is_tensor() || !in->type.is_tensor() || !in->type.shape) continue;
    const Tensor& t = given->second.tensor();
    if (t.dtype() == DType::kString || t.rank() != static_cast<int64_t>(in->type.shape->rank())) continue;
    std::vector<int64_t> padded = t.shape();
    for (size_t d = 0; d < padded.size(); ++d) {
      const ir::Dim& dim = in->type.shape->dims()[d];
      const auto range = dim.is_symbol() ? profile.find(dim.symbol_name()) : profile.end();
      if (range == profile.end()) continue;
      if (padded[d] > range->second.max)
        return shape_guard_failure("input '" + in->name + "' dim " + std::to_string(d) + " (" + dim.symbol_name() + ") is " +
                                   std::to_string(padded[d]) + ", above the profile's max " + std::to_string(range->second.max) +
                                   " (policy: pad)");
      run.symbols[dim.symbol_name()] = padded[d];
      padded[d] = bucket_of(range->second, padded[d]);
    }
    if (padded == t.shape()) continue;
    run.real_elements += t.element_count();
    run.padded_elements += shape_element_count(padded);
    run.inputs[in->name] = Value(resized_copy(t, padded));
  }
  return run;
}

}  // namespace kiln::runtime
