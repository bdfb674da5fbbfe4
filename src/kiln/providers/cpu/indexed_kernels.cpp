// cpu kernels for data movement addressed by index tensors: GatherElements, GatherND,
// ScatterElements (and Scatter-9), ScatterND, any fixed-size dtype. Index tensors become element
// offsets into the data in one pass (each value checked against its axis, negative ones counted
// from the end); gathers then copy elements or whole slices over OpenMP threads. Scatters copy the
// data once (in parallel) and write the updates in index order, so repeated indices end as the
// reference leaves them: the last write wins, reductions combine in order.
#include <atomic>
#include <cstring>

#include "kiln/ops/data_movement.h"
#include "kiln/ops/family_support.h"
#include "kiln/ops/op_helpers.h"
#include "kiln/providers/cpu/cpu_kernels.h"
#include "kiln/providers/cpu/onednn_support.h"

namespace kiln::providers::cpu {
namespace {

// Copies of at least this many bytes are spread over threads.
constexpr int64_t kParallelBytes = 1 << 16;

Capability indexed_supports(const ir::Node& node, size_t data, size_t indices, std::optional<size_t> updates) {
  Capability c = fixed_size_tensor(node, data);
  if (!c.supported) return c;
  const ir::Value* index = node.input(indices);
  if (!index || !index->type.is_tensor() || (index->type.dtype != DType::kInt64 && index->type.dtype != DType::kInt32))
    return Capability::no(node.op_type + " indices are not int32 or int64");
  if (updates && !fixed_size_tensor(node, *updates).supported) return fixed_size_tensor(node, *updates);
  return Capability::yes();
}

// The error for the first index of `values` outside [-dim, dim) (in the order the reference checks).
Status out_of_range(const ops::KernelContext& ctx, const std::vector<int64_t>& values, int64_t dim) {
  for (int64_t v : values)
    if (v < -dim || v >= dim)
      return ctx.error("index " + std::to_string(v) + " is out of range for an axis of size " + std::to_string(dim));
  return Status::ok();
}

// Element offsets along `dims` (a prefix or suffix of the index shape) in a tensor of `strides`:
// offsets[i] for the i-th row-major position of `dims`.
std::vector<int64_t> offsets_of(const std::vector<int64_t>& dims, const std::vector<int64_t>& strides) {
  std::vector<int64_t> offsets{0};
  for (size_t d = 0; d < dims.size(); ++d) {
    std::vector<int64_t> next;
    next.reserve(offsets.size() * static_cast<size_t>(dims[d]));
    for (int64_t base : offsets)
      for (int64_t k = 0; k < dims[d]; ++k) next.push_back(base + k * strides[d]);
    offsets = std::move(next);
  }
  return offsets;
}

// GatherElements / ScatterElements: the data offset of each position of the index tensor (its
// coordinates, with the axis one replaced by the index value). Indices may be smaller than the
// data on every dim but the axis, never larger.
Result<std::vector<int64_t>> element_offsets(ops::KernelContext& ctx, const std::vector<int64_t>& data, size_t axis) {
  const Tensor& index_tensor = *ctx.input(1);
  const std::vector<int64_t>& shape = index_tensor.shape();
  KILN_RETURN_IF_ERROR(ops::check_element_indices_shape(ctx, data, shape, axis));
  KILN_ASSIGN_OR_RETURN(const std::vector<int64_t> values, ops::read_int64s(index_tensor, "indices"));
  const std::vector<int64_t> strides = ops::contiguous_strides(data);
  const std::vector<int64_t> outer = offsets_of({shape.begin(), shape.begin() + static_cast<std::ptrdiff_t>(axis)},
                                                {strides.begin(), strides.begin() + static_cast<std::ptrdiff_t>(axis)});
  const std::vector<int64_t> inner = offsets_of({shape.begin() + static_cast<std::ptrdiff_t>(axis) + 1, shape.end()},
                                                {strides.begin() + static_cast<std::ptrdiff_t>(axis) + 1, strides.end()});
  const int64_t dim = data[axis], along = shape[axis], stride = strides[axis];
  const auto rows = static_cast<int64_t>(outer.size()) * along, row_length = static_cast<int64_t>(inner.size());
  std::vector<int64_t> offsets(values.size());
  std::atomic<bool> bad{false};
#pragma omp parallel for schedule(static) if (static_cast<int64_t>(values.size()) * 8 > kParallelBytes)
  for (int64_t row = 0; row < rows; ++row) {
    const int64_t base = outer[static_cast<size_t>(row / along)];
    for (int64_t j = 0; j < row_length; ++j) {
      const auto at = static_cast<size_t>(row * row_length + j);
      int64_t v = values[at];
      if (v < -dim || v >= dim) {
        bad = true;
        v = 0;
      }
      offsets[at] = base + (v < 0 ? v + dim : v) * stride + inner[static_cast<size_t>(j)];
    }
  }
  if (bad) return out_of_range(ctx, values, dim);
  return offsets;
}

// GatherND / ScatterND: the offset of the slice each index tuple addresses (after batch_dims
// leading dims shared by data and indices), and the slice's length in elements.
struct SliceAddressing {
  std::vector<int64_t> offsets;
  int64_t slice = 1;
};

Result<SliceAddressing> slice_offsets(ops::KernelContext& ctx, const std::vector<int64_t>& data, size_t batch_dims) {
  const Tensor& index_tensor = *ctx.input(1);
  const std::vector<int64_t>& shape = index_tensor.shape();
  if (shape.empty()) return ctx.error("indices must have rank >= 1");
  const auto depth = static_cast<size_t>(shape.back());
  if (batch_dims >= shape.size() || batch_dims + depth > data.size())
    return ctx.error("indices address " + std::to_string(depth) + " dims past " + std::to_string(batch_dims) +
                     " batch dims of a rank-" + std::to_string(data.size()) + " tensor");
  for (size_t d = 0; d < batch_dims; ++d)
    if (shape[d] != data[d]) return ctx.error("indices and data disagree on batch dim " + std::to_string(d));
  KILN_ASSIGN_OR_RETURN(const std::vector<int64_t> values, ops::read_int64s(index_tensor, "indices"));
  const std::vector<int64_t> strides = ops::contiguous_strides(data);
  SliceAddressing a;
  a.slice = 1;
  for (size_t d = batch_dims + depth; d < data.size(); ++d) a.slice *= data[d];
  int64_t tuples = 1, batches = 1;
  for (size_t d = 0; d + 1 < shape.size(); ++d) tuples *= shape[d];
  for (size_t d = 0; d < batch_dims; ++d) batches *= shape[d];
  const int64_t per_batch = batches == 0 ? 0 : tuples / batches;
  const int64_t batch_stride = batch_dims == 0 ? 0 : strides[batch_dims - 1];
  a.offsets.resize(static_cast<size_t>(tuples));
  for (int64_t t = 0; t < tuples; ++t) {
    int64_t offset = per_batch == 0 ? 0 : (t / per_batch) * batch_stride;
    for (size_t k = 0; k < depth; ++k) {
      const int64_t dim = data[batch_dims + k], v = values[static_cast<size_t>(t) * depth + k];
      if (v < -dim || v >= dim)
        return ctx.error("index " + std::to_string(v) + " is out of range for an axis of size " + std::to_string(dim));
      offset += (v < 0 ? v + dim : v) * strides[batch_dims + k];
    }
    a.offsets[static_cast<size_t>(t)] = offset;
  }
  return a;
}

// out[t * slice ...] = data[offsets[t] ...] for every t, element size `bytes`.
void gather_slices(const char* data, char* out, const std::vector<int64_t>& offsets, int64_t slice, size_t bytes) {
  const size_t slice_bytes = static_cast<size_t>(slice) * bytes;
  const auto count = static_cast<int64_t>(offsets.size());
#pragma omp parallel for schedule(static) if (count > 1 && static_cast<int64_t>(slice_bytes) * count > kParallelBytes)
  for (int64_t t = 0; t < count; ++t)
    std::memcpy(out + static_cast<size_t>(t) * slice_bytes, data + static_cast<size_t>(offsets[static_cast<size_t>(t)]) * bytes,
                slice_bytes);
}

// out = data, copied in parallel chunks.
void copy_data(const Tensor& data, Tensor& out) {
  const auto* src = static_cast<const char*>(data.raw_data());
  auto* dst = static_cast<char*>(out.raw_data());
  if (src == dst) return;
  const auto bytes = static_cast<int64_t>(data.byte_size());
  constexpr int64_t kChunk = 1 << 16;
  const int64_t chunks = (bytes + kChunk - 1) / kChunk;
#pragma omp parallel for schedule(static) if (chunks > 1)
  for (int64_t c = 0; c < chunks; ++c)
    std::memcpy(dst + c * kChunk, src + c * kChunk, static_cast<size_t>(std::min(kChunk, bytes - c * kChunk)));
}

enum class Reduction { kNone, kAdd, kMul, kMax, kMin };

Result<Reduction> reduction_of(const ir::Node& node) {
  const std::string r = node.attr_string("reduction", "none");
  if (r == "none") return Reduction::kNone;
  if (r == "add") return Reduction::kAdd;
  if (r == "mul") return Reduction::kMul;
  if ((r == "max" || r == "min") && node.opset_version >= 18) return r == "max" ? Reduction::kMax : Reduction::kMin;
  return invalid_model(node.describe() + ": reduction '" + r + "' is not one of none, add, mul" +
                       (node.opset_version >= 18 ? ", max, min" : " (max and min need opset 18)"));
}

// Copies data to the output, then writes update slice t at offsets[t] in order, combining with
// what is there unless the reduction is none (float16 and bfloat16 combine in float, as the
// reference does).
Status scatter(ops::KernelContext& ctx, const std::vector<int64_t>& offsets, int64_t slice, Reduction reduction) {
  const Tensor& updates = *ctx.input(2);
  Tensor& out = *ctx.output(0);
  if (updates.dtype() != out.dtype())
    return ctx.error(std::string("updates are ") + dtype_name(updates.dtype()) + ", data " + dtype_name(out.dtype()));
  if (static_cast<int64_t>(offsets.size()) * slice != updates.element_count())
    return ctx.error("updates have " + std::to_string(updates.element_count()) + " elements, expected " +
                     std::to_string(static_cast<int64_t>(offsets.size()) * slice));
  copy_data(*ctx.input(0), out);
  const size_t bytes = dtype_size(out.dtype());
  auto* dst = static_cast<char*>(out.raw_data());
  const auto* src = static_cast<const char*>(updates.raw_data());
  if (reduction == Reduction::kNone) {
    for (size_t t = 0; t < offsets.size(); ++t)
      std::memcpy(dst + static_cast<size_t>(offsets[t]) * bytes, src + t * static_cast<size_t>(slice) * bytes,
                  static_cast<size_t>(slice) * bytes);
    return Status::ok();
  }
  const bool numeric = ops::dispatch<ops::NumericTypes>(out.dtype(), [&]<class T>() {
    T* o = out.data<T>();
    const T* u = updates.data<T>();
    for (size_t t = 0; t < offsets.size(); ++t)
      for (int64_t k = 0; k < slice; ++k) {
        T& a = o[offsets[t] + k];
        const T v = u[static_cast<int64_t>(t) * slice + k];
        if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) {
          const double x = ops::to_double(a), y = ops::to_double(v);
          const double r = reduction == Reduction::kAdd ? x + y : reduction == Reduction::kMul ? x * y
                         : reduction == Reduction::kMax ? std::max(x, y) : std::min(x, y);
          a = ops::from_double<T>(r);
        } else {
          a = reduction == Reduction::kAdd ? static_cast<T>(a + v) : reduction == Reduction::kMul ? static_cast<T>(a * v)
            : reduction == Reduction::kMax ? std::max(a, v) : std::min(a, v);
        }
      }
  });
  if (!numeric) return ctx.error("a reduction needs a numeric tensor, got " + std::string(dtype_name(out.dtype())));
  return Status::ok();
}

Result<ops::Kernel> build_gather_elements(const ir::Node& node) {
  const std::vector<int64_t> data = input_dims(node, 0);
  KILN_ASSIGN_OR_RETURN(const int64_t axis, ops::normalize_axis(node.attr_int("axis", 0), static_cast<int64_t>(data.size())));
  const size_t bytes = dtype_size(node.inputs[0]->type.dtype);
  return ops::Kernel([=](ops::KernelContext& ctx) -> Status {
    KILN_ASSIGN_OR_RETURN(const std::vector<int64_t> offsets, element_offsets(ctx, data, static_cast<size_t>(axis)));
    gather_slices(static_cast<const char*>(ctx.input(0)->raw_data()), static_cast<char*>(ctx.output(0)->raw_data()), offsets,
                  1, bytes);
    return Status::ok();
  });
}

Result<ops::Kernel> build_gather_nd(const ir::Node& node) {
  const std::vector<int64_t> data = input_dims(node, 0);
  const int64_t batch_dims = node.attr_int("batch_dims", 0);
  if (batch_dims < 0) return invalid_model(node.describe() + ": batch_dims must not be negative");
  const size_t bytes = dtype_size(node.inputs[0]->type.dtype);
  return ops::Kernel([=](ops::KernelContext& ctx) -> Status {
    KILN_ASSIGN_OR_RETURN(const SliceAddressing a, slice_offsets(ctx, data, static_cast<size_t>(batch_dims)));
    gather_slices(static_cast<const char*>(ctx.input(0)->raw_data()), static_cast<char*>(ctx.output(0)->raw_data()),
                  a.offsets, a.slice, bytes);
    return Status::ok();
  });
}

Result<ops::Kernel> build_scatter_elements(const ir::Node& node) {
  const std::vector<int64_t> data = input_dims(node, 0);
  KILN_ASSIGN_OR_RETURN(const int64_t axis, ops::normalize_axis(node.attr_int("axis", 0), static_cast<int64_t>(data.size())));
  KILN_ASSIGN_OR_RETURN(const Reduction reduction, reduction_of(node));
  return ops::Kernel([=](ops::KernelContext& ctx) -> Status {
    if (ctx.input(1)->shape() != ctx.input(2)->shape()) return ctx.error("indices and updates must have the same shape");
    KILN_ASSIGN_OR_RETURN(const std::vector<int64_t> offsets, element_offsets(ctx, data, static_cast<size_t>(axis)));
    return scatter(ctx, offsets, 1, reduction);
  });
}

Result<ops::Kernel> build_scatter_nd(const ir::Node& node) {
  const std::vector<int64_t> data = input_dims(node, 0);
  KILN_ASSIGN_OR_RETURN(const Reduction reduction, reduction_of(node));
  return ops::Kernel([=](ops::KernelContext& ctx) -> Status {
    KILN_ASSIGN_OR_RETURN(const SliceAddressing a, slice_offsets(ctx, data, 0));
    return scatter(ctx, a.offsets, a.slice, reduction);
  });
}

}  // namespace

void add_indexed_kernels(CpuKernelTable& table) {
  table["GatherElements"] = node_only([](const ir::Node& n) { return indexed_supports(n, 0, 1, std::nullopt); }, build_gather_elements);
  table["GatherND"] = node_only([](const ir::Node& n) { return indexed_supports(n, 0, 1, std::nullopt); }, build_gather_nd);
  for (const char* op : {"Scatter", "ScatterElements"})
    table[op] = node_only([](const ir::Node& n) { return indexed_supports(n, 0, 1, 2); }, build_scatter_elements);
  table["ScatterND"] = node_only([](const ir::Node& n) { return indexed_supports(n, 0, 1, 2); }, build_scatter_nd);
}

}  // namespace kiln::providers::cpu
