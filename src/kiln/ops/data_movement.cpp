// Op family data movement: Transpose, Concat, Split, Slice, Gather(Elements/ND), Scatter(Elements/ND),
// Tile, Pad, CenterCropPad, Trilu, DepthToSpace, SpaceToDepth. Kernels move elements by storage size, so they serve
// every dtype; shape rules keep symbolic dims on the axes an op does not touch.
#include "kiln/ops/data_movement.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <set>

#include "kiln/ops/channels_last.h"
#include "kiln/ops/family_support.h"
#include "kiln/ops/op_families.h"
#include "kiln/ops/op_helpers.h"

namespace kiln::ops {

// ---- shared helpers (declared in data_movement.h) ----

void copy_elements(const Tensor& src, int64_t src_offset, Tensor& dst, int64_t dst_offset, int64_t count) {
  if (count <= 0) return;
  if (src.dtype() == DType::kString) {
    std::copy_n(src.data<std::string>() + src_offset, count, dst.data<std::string>() + dst_offset);
    return;
  }
  const size_t size = dtype_size(src.dtype());
  if (src.raw_data() == dst.raw_data() && src_offset == dst_offset) return;  // in place
  std::memcpy(static_cast<char*>(dst.raw_data()) + dst_offset * size,
              static_cast<const char*>(src.raw_data()) + src_offset * size, static_cast<size_t>(count) * size);
}

void copy_all_elements(const Tensor& src, Tensor& dst) { copy_elements(src, 0, dst, 0, dst.element_count()); }

void gather_by_offsets(const Tensor& src, Tensor& dst, const std::vector<int64_t>& offsets) {
  visit_storage(src.dtype(), [&]<class T>() {
    const T* in = src.data<T>();
    T* out = dst.data<T>();
    for (size_t i = 0; i < offsets.size(); ++i) out[i] = offsets[i] < 0 ? T{} : in[offsets[i]];
  });
}

std::vector<int64_t> strided_offsets(const std::vector<int64_t>& out_shape, const std::vector<int64_t>& strides,
                                     int64_t base) {
  std::vector<int64_t> offsets(static_cast<size_t>(std::max<int64_t>(shape_element_count(out_shape), 0)));
  BroadcastIterator it(out_shape, {strides});
  for (size_t i = 0; i < offsets.size(); ++i, it.next()) offsets[i] = base + it.offset(0);
  return offsets;
}

std::vector<int64_t> permuted_offsets(const std::vector<int64_t>& in_shape, const std::vector<int64_t>& perm) {
  const std::vector<int64_t> in_strides = contiguous_strides(in_shape);
  std::vector<int64_t> out_shape(perm.size()), strides(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) {
    out_shape[i] = in_shape[perm[i]];
    strides[i] = in_strides[perm[i]];
  }
  return strided_offsets(out_shape, strides);
}

int64_t dims_product(const std::vector<int64_t>& dims, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end && i < dims.size(); ++i) p *= dims[i];
  return p;
}

ir::Dim dims_product(const std::vector<ir::Dim>& dims) {
  int64_t p = 1;
  const ir::Dim* symbol = nullptr;
  for (const ir::Dim& d : dims) {
    if (d.is_static()) {
      p *= d.value();
    } else if (d.is_symbol() && !symbol) {
      symbol = &d;
    } else {
      return ir::Dim::unknown();
    }
  }
  if (!symbol) return p;
  return p == 1 ? *symbol : ir::Dim::unknown();
}

Result<std::optional<std::vector<int64_t>>> known_int64s(const InferenceContext& ctx, size_t i,
                                                         const std::string& what) {
  const Tensor* t = ctx.input_value(i);
  if (!t) return std::optional<std::vector<int64_t>>();
  Result<std::vector<int64_t>> values = read_int64s(*t, what);
  if (!values.is_ok()) return ctx.error(values.status().message());
  return std::optional<std::vector<int64_t>>(std::move(values).value());
}

ShapeRule with_required_inputs(size_t count, ShapeRule rule) {
  return [count, rule = std::move(rule)](InferenceContext& ctx) -> Status {
    for (size_t i = 0; i < count; ++i)
      if (!ctx.has_input(i))
        return ctx.error("input " + std::to_string(i) + " is required but " +
                         (i < ctx.input_count() ? "omitted" : "missing"));
    return rule(ctx);
  };
}

namespace {

// Axis attribute normalised against `rank`, as an InvalidModel naming the node.
Result<int64_t> axis_attr(const InferenceContext& ctx, int64_t rank, int64_t fallback = 0) {
  Result<int64_t> axis = normalize_axis(ctx.node().attr_int("axis", fallback), rank);
  if (!axis.is_ok()) return ctx.error(axis.status().message());
  return axis;
}

// Index value `v` on an axis of size `dim`, negative counting from the end; error when out of range.
Result<int64_t> wrap_index(int64_t v, int64_t dim, const KernelContext& ctx) {
  if (v < -dim || v >= dim)
    return ctx.error("index " + std::to_string(v) + " is out of range for an axis of size " + std::to_string(dim));
  return v < 0 ? v + dim : v;
}

}  // namespace

Status check_element_indices_shape(const KernelContext& ctx, const std::vector<int64_t>& data_shape,
                                   const std::vector<int64_t>& index_shape, size_t axis) {
  if (index_shape.size() != data_shape.size()) return ctx.error("indices and data must have the same rank");
  for (size_t d = 0; d < index_shape.size(); ++d)
    if (d != axis && index_shape[d] > data_shape[d])
      return ctx.error("indices dim " + std::to_string(d) + " (" + std::to_string(index_shape[d]) + ") exceeds data's (" +
                       std::to_string(data_shape[d]) + ")");
  return Status::ok();
}

// ---- Transpose ----

Result<std::vector<int64_t>> permutation_attr(const ir::Node& node, const std::string& attr, size_t rank,
                                              std::vector<int64_t> fallback) {
  std::vector<int64_t> perm = node.has_attr(attr) ? node.attr_ints(attr) : std::move(fallback);
  std::vector<int64_t> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  bool valid = sorted.size() == rank;
  for (size_t i = 0; i < sorted.size(); ++i) valid = valid && sorted[i] == static_cast<int64_t>(i);
  if (!valid)
    return invalid_model(node.describe() + ": " + attr + " is not a permutation of the " + std::to_string(rank) + " axes");
  return perm;
}

Result<std::vector<int64_t>> transpose_perm(const ir::Node& node, size_t rank) {
  std::vector<int64_t> reversed;
  for (size_t i = rank; i-- > 0;) reversed.push_back(static_cast<int64_t>(i));
  return permutation_attr(node, "perm", rank, reversed);
}

namespace {

Status transpose_infer(InferenceContext& ctx) {
  const ir::TensorType& in = ctx.input_type(0);
  if (!in.shape) {
    ctx.set_output_type(0, typed_like(in, std::nullopt));
    return Status::ok();
  }
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> perm, transpose_perm(ctx.node(), in.shape->rank()));
  ctx.set_output_type(0, typed_like(in, permuted(*in.shape, perm)));
  return Status::ok();
}

Status transpose_kernel(KernelContext& ctx) {
  const Tensor& in = *ctx.input(0);
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> perm, transpose_perm(ctx.node(), in.shape().size()));
  gather_by_offsets(in, *ctx.output(0), permuted_offsets(in.shape(), perm));
  return Status::ok();
}

// ---- Concat and Split: one tensor cut into pieces along an axis ----

// Copies between `whole` and its consecutive `pieces` along `axis`: into the pieces when
// `to_pieces`, else from them. Null pieces (omitted outputs) are skipped but keep their slot.
void move_axis_pieces(const Tensor* whole_in, Tensor* whole_out, const std::vector<const Tensor*>& piece_in,
                      const std::vector<Tensor*>& piece_out, const std::vector<int64_t>& sizes, size_t axis,
                      const std::vector<int64_t>& whole_shape) {
  const int64_t outer = dims_product(whole_shape, 0, axis);
  const int64_t inner = dims_product(whole_shape, axis + 1, whole_shape.size());
  const int64_t whole_axis = whole_shape[axis];
  int64_t start = 0;
  for (size_t k = 0; k < sizes.size(); ++k) {
    const int64_t chunk = sizes[k] * inner;
    for (int64_t o = 0; o < outer; ++o) {
      const int64_t whole_offset = (o * whole_axis + start) * inner;
      if (whole_out && piece_in[k]) copy_elements(*piece_in[k], o * chunk, *whole_out, whole_offset, chunk);
      if (whole_in && piece_out[k]) copy_elements(*whole_in, whole_offset, *piece_out[k], o * chunk, chunk);
    }
    start += sizes[k];
  }
}

// Merges dim `b` into `a` where they must agree (a non-axis dim of Concat's inputs).
Status merge_dim(ir::Dim& a, const ir::Dim& b, const InferenceContext& ctx) {
  if (a.is_static() && b.is_static() && a.value() != b.value())
    return ctx.error("inputs disagree on a non-concatenated dim: " + a.to_string() + " vs " + b.to_string());
  if (!a.is_static() && (b.is_static() || !(a == b))) a = b.is_static() ? b : ir::Dim::unknown();
  return Status::ok();
}

Status concat_infer(InferenceContext& ctx) {
  if (ctx.input_count() == 0 || !ctx.has_input(0)) return ctx.error("needs at least one input");
  std::optional<ir::Shape> out;
  for (size_t i = 0; i < ctx.input_count(); ++i)
    if (ctx.has_input(i) && ctx.input_type(i).shape) out = ctx.input_type(i).shape;
  if (!out) {
    ctx.set_output_type(0, typed_like(ctx.input_type(0), std::nullopt));
    return Status::ok();
  }
  KILN_ASSIGN_OR_RETURN(int64_t axis, axis_attr(ctx, static_cast<int64_t>(out->rank()), 1));
  std::vector<ir::Dim>& dims = out->dims();
  int64_t axis_sum = 0;
  bool axis_known = true;
  for (size_t i = 0; i < ctx.input_count(); ++i) {
    if (!ctx.has_input(i)) return ctx.error("input " + std::to_string(i) + " is omitted");
    const ir::TensorType& t = ctx.input_type(i);
    if (t.dtype != ctx.input_type(0).dtype) return ctx.error("inputs have different element types");
    if (!t.shape) {
      axis_known = false;
      continue;
    }
    if (t.shape->rank() != dims.size()) return ctx.error("inputs have different ranks");
    for (size_t d = 0; d < dims.size(); ++d) {
      if (d == static_cast<size_t>(axis)) continue;
      KILN_RETURN_IF_ERROR(merge_dim(dims[d], (*t.shape)[d], ctx));
    }
    const ir::Dim& a = (*t.shape)[static_cast<size_t>(axis)];
    axis_known = axis_known && a.is_static();
    axis_sum += a.is_static() ? a.value() : 0;
  }
  dims[static_cast<size_t>(axis)] = axis_known ? ir::Dim(axis_sum) : ir::Dim::unknown();
  if (ctx.input_count() == 1) dims[static_cast<size_t>(axis)] = (*ctx.input_type(0).shape)[static_cast<size_t>(axis)];
  ctx.set_output_type(0, typed_like(ctx.input_type(0), *out));
  return Status::ok();
}

Status concat_kernel(KernelContext& ctx) {
  Tensor& out = *ctx.output(0);
  const size_t axis = static_cast<size_t>(normalize_axis(ctx.node().attr_int("axis", 1), out.rank()).value());
  std::vector<const Tensor*> pieces;
  std::vector<int64_t> sizes;
  for (size_t i = 0; i < ctx.input_count(); ++i) {
    pieces.push_back(ctx.input(i));
    sizes.push_back(ctx.input(i)->shape()[axis]);
  }
  move_axis_pieces(nullptr, &out, pieces, std::vector<Tensor*>(pieces.size()), sizes, axis, out.shape());
  return Status::ok();
}

// Split sizes from the attribute (< 13) or input 1 (>= 13); nullopt when not given.
Result<std::optional<std::vector<int64_t>>> split_sizes(const InferenceContext& ctx) {
  if (ctx.opset() < 13) {
    if (!ctx.node().has_attr("split")) return std::optional<std::vector<int64_t>>();
    return std::optional<std::vector<int64_t>>(ctx.node().attr_ints("split"));
  }
  if (!ctx.has_input(1)) return std::optional<std::vector<int64_t>>();
  return known_int64s(ctx, 1, "split");
}

// Sizes of Split's `n` outputs when none are given: equal parts; from opset 18 (num_outputs) the
// last part may be smaller, before that the axis must divide evenly.
Result<std::vector<int64_t>> equal_split(int64_t dim, size_t n, const ir::Node& node) {
  const auto parts = static_cast<int64_t>(n);
  if (node.opset_version >= 18) {
    if (node.has_attr("num_outputs") && node.attr_int("num_outputs", parts) != parts)
      return invalid_model(node.describe() + ": num_outputs is " + std::to_string(node.attr_int("num_outputs", parts)) + " but the node has " +
                           std::to_string(n) + " outputs");
    if (parts == 0) return invalid_model(node.describe() + ": no outputs to split into");
    const int64_t chunk = (dim + parts - 1) / parts;
    std::vector<int64_t> sizes;
    for (int64_t k = 0, left = dim; k < parts; ++k, left -= chunk) sizes.push_back(std::clamp<int64_t>(left, 0, chunk));
    return sizes;
  }
  if (parts == 0 || dim % parts != 0)
    return invalid_model(node.describe() + ": axis of size " + std::to_string(dim) + " cannot be split into " + std::to_string(n) +
                         " equal parts");
  return std::vector<int64_t>(n, dim / parts);
}

Status split_infer(InferenceContext& ctx) {
  const ir::TensorType& in = ctx.input_type(0);
  const size_t n = ctx.output_count();
  if (!in.shape) {
    for (size_t k = 0; k < n; ++k) ctx.set_output_type(k, typed_like(in, std::nullopt));
    return Status::ok();
  }
  KILN_ASSIGN_OR_RETURN(int64_t axis, axis_attr(ctx, static_cast<int64_t>(in.shape->rank())));
  const ir::Dim dim = (*in.shape)[static_cast<size_t>(axis)];
  KILN_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> sizes, split_sizes(ctx));
  const bool sizes_given = sizes.has_value() || (ctx.opset() >= 13 && ctx.has_input(1));
  if (sizes) {
    if (sizes->size() != n)
      return ctx.error("split has " + std::to_string(sizes->size()) + " sizes for " + std::to_string(n) + " outputs");
    int64_t sum = 0;
    for (int64_t s : *sizes) {
      if (s < 0) return ctx.error("split sizes must not be negative");
      sum += s;
    }
    if (dim.is_static() && sum != dim.value())
      return ctx.error("split sizes sum to " + std::to_string(sum) + " but the axis has " + dim.to_string());
  } else if (!sizes_given && dim.is_static()) {
    KILN_ASSIGN_OR_RETURN(sizes, equal_split(dim.value(), n, ctx.node()));
  }
  if (sizes_given && ctx.opset() >= 18 && ctx.node().has_attr("num_outputs"))
    return ctx.error("takes either the split input or num_outputs, not both");
  for (size_t k = 0; k < n; ++k) {
    ir::Shape s = *in.shape;
    s.dims()[static_cast<size_t>(axis)] = sizes ? ir::Dim((*sizes)[k]) : ir::Dim::unknown();
    ctx.set_output_type(k, typed_like(in, s));
  }
  return Status::ok();
}

Status split_kernel(KernelContext& ctx) {
  const Tensor& in = *ctx.input(0);
  const size_t axis = static_cast<size_t>(normalize_axis(ctx.node().attr_int("axis", 0), in.rank()).value());
  std::vector<Tensor*> pieces;
  for (size_t k = 0; k < ctx.output_count(); ++k) pieces.push_back(ctx.output(k));
  std::vector<int64_t> sizes = ctx.opset() < 13 ? ctx.node().attr_ints("split") : std::vector<int64_t>();
  if (ctx.opset() >= 13 && ctx.input(1)) {
    KILN_ASSIGN_OR_RETURN(sizes, read_int64s(*ctx.input(1), "split"));
  }
  if (sizes.empty()) {
    KILN_ASSIGN_OR_RETURN(sizes, equal_split(in.shape()[axis], pieces.size(), ctx.node()));
  }
  move_axis_pieces(&in, nullptr, std::vector<const Tensor*>(pieces.size()), pieces, sizes, axis, in.shape());
  return Status::ok();
}

// ---- Slice ----

struct SliceArgs {
  std::vector<int64_t> starts, ends, axes, steps;
};

// One axis of a slice: the first index read and the element count, after clamping.
struct AxisSlice {
  int64_t start = 0, size = 0;
};

AxisSlice slice_axis(int64_t dim, int64_t start, int64_t end, int64_t step) {
  if (dim == 0) return {0, 0};
  if (start < 0) start += dim;
  if (end < 0) end += dim;
  if (step > 0) {
    start = std::clamp<int64_t>(start, 0, dim);
    end = std::clamp<int64_t>(end, 0, dim);
  } else {
    start = std::clamp<int64_t>(start, 0, dim - 1);
    end = std::clamp<int64_t>(end, -1, dim - 1);
  }
  const int64_t span = end - start;
  int64_t size = step > 0 ? (span + step - 1) / step : (span + step + 1) / step;
  return {start, std::max<int64_t>(size, 0)};
}

// Checks lengths, steps and axes and normalises axes against `rank`.
Status validate_slice(SliceArgs& a, int64_t rank, const ir::Node& node) {
  const std::string who = node.describe() + ": ";
  if (a.ends.size() != a.starts.size()) return invalid_model(who + "starts and ends have different lengths");
  if (a.axes.empty())
    for (size_t i = 0; i < a.starts.size(); ++i) a.axes.push_back(static_cast<int64_t>(i));
  if (a.steps.empty()) a.steps.assign(a.starts.size(), 1);
  if (a.axes.size() != a.starts.size() || a.steps.size() != a.starts.size())
    return invalid_model(who + "axes and steps must have as many entries as starts");
  std::set<int64_t> seen;
  for (int64_t& axis : a.axes) {
    Result<int64_t> n = normalize_axis(axis, rank);
    if (!n.is_ok()) return invalid_model(who + n.status().message());
    axis = n.value();
    if (!seen.insert(axis).second) return invalid_model(who + "axis " + std::to_string(axis) + " is repeated");
  }
  for (int64_t s : a.steps)
    if (s == 0) return invalid_model(who + "steps must not be 0");
  return Status::ok();
}

// Slice arguments as values: attributes at opset 1, inputs 1..4 later; nullopt when not all known.
Result<std::optional<SliceArgs>> slice_args(const InferenceContext& ctx) {
  const ir::Node& node = ctx.node();
  SliceArgs a;
  if (ctx.opset() < 10) {
    a.starts = node.attr_ints("starts");
    a.ends = node.attr_ints("ends");
    a.axes = node.attr_ints("axes");
    return std::optional<SliceArgs>(a);
  }
  std::vector<int64_t>* targets[] = {&a.starts, &a.ends, &a.axes, &a.steps};
  const char* names[] = {"starts", "ends", "axes", "steps"};
  for (size_t i = 1; i <= 4; ++i) {
    if (!ctx.has_input(i)) {
      if (i <= 2) return ctx.error(std::string(names[i - 1]) + " input is required");
      continue;
    }
    KILN_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> v, known_int64s(ctx, i, names[i - 1]));
    if (!v) return std::optional<SliceArgs>();
    *targets[i - 1] = std::move(*v);
  }
  return std::optional<SliceArgs>(a);
}

Status slice_infer(InferenceContext& ctx) {
  const ir::TensorType& in = ctx.input_type(0);
  if (!in.shape) {
    ctx.set_output_type(0, typed_like(in, std::nullopt));
    return Status::ok();
  }
  KILN_ASSIGN_OR_RETURN(std::optional<SliceArgs> args, slice_args(ctx));
  ir::Shape out = *in.shape;
  if (!args) {
    // Axes may still be known: the other dims pass through.
    std::optional<std::vector<int64_t>> axes;
    if (ctx.has_input(3)) {
      KILN_ASSIGN_OR_RETURN(axes, known_int64s(ctx, 3, "axes"));
    }
    if (!axes) {
      ctx.set_output_type(0, typed_like(in, unknown_shape(out.rank())));
      return Status::ok();
    }
    for (int64_t axis : *axes) {
      Result<int64_t> n = normalize_axis(axis, static_cast<int64_t>(out.rank()));
      if (!n.is_ok()) return ctx.error(n.status().message());
      out.dims()[static_cast<size_t>(n.value())] = ir::Dim::unknown();
    }
    ctx.set_output_type(0, typed_like(in, out));
    return Status::ok();
  }
  KILN_RETURN_IF_ERROR(validate_slice(*args, static_cast<int64_t>(out.rank()), ctx.node()));
  for (size_t i = 0; i < args->axes.size(); ++i) {
    ir::Dim& d = out.dims()[static_cast<size_t>(args->axes[i])];
    if (d.is_static()) {
      d = slice_axis(d.value(), args->starts[i], args->ends[i], args->steps[i]).size;
    } else if (!(args->starts[i] == 0 && args->steps[i] == 1 && args->ends[i] >= std::numeric_limits<int32_t>::max())) {
      d = ir::Dim::unknown();  // a full-range slice keeps a symbolic dim
    }
  }
  ctx.set_output_type(0, typed_like(in, out));
  return Status::ok();
}

Status slice_kernel(KernelContext& ctx) {
  std::vector<const Tensor*> args;
  for (size_t i = 1; i < ctx.input_count(); ++i) args.push_back(ctx.input(i));
  KILN_ASSIGN_OR_RETURN(const StridedView view, slice_view(ctx.node(), ctx.input(0)->shape(), args));
  gather_by_offsets(*ctx.input(0), *ctx.output(0), strided_offsets(ctx.output(0)->shape(), view.strides, view.base));
  return Status::ok();
}

// ---- Gather family ----

Status gather_infer(InferenceContext& ctx) {
  const ir::TensorType& data = ctx.input_type(0);
  const ir::TensorType& indices = ctx.input_type(1);
  if (!data.shape || !indices.shape) {
    ctx.set_output_type(0, typed_like(data, std::nullopt));
    return Status::ok();
  }
  KILN_ASSIGN_OR_RETURN(int64_t axis, axis_attr(ctx, static_cast<int64_t>(data.shape->rank())));
  const auto& d = data.shape->dims();
  std::vector<ir::Dim> dims(d.begin(), d.begin() + axis);
  dims.insert(dims.end(), indices.shape->dims().begin(), indices.shape->dims().end());
  dims.insert(dims.end(), d.begin() + axis + 1, d.end());
  ctx.set_output_type(0, typed_like(data, ir::Shape(dims)));
  return Status::ok();
}

Status gather_kernel(KernelContext& ctx) {
  const Tensor& data = *ctx.input(0);
  const size_t axis = static_cast<size_t>(normalize_axis(ctx.node().attr_int("axis", 0), data.rank()).value());
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> indices, read_int64s(*ctx.input(1), "indices"));
  const int64_t outer = dims_product(data.shape(), 0, axis);
  const int64_t inner = dims_product(data.shape(), axis + 1, data.shape().size());
  const int64_t dim = data.shape()[axis];
  const int64_t n = static_cast<int64_t>(indices.size());
  for (int64_t i = 0; i < n; ++i) {
    KILN_ASSIGN_OR_RETURN(indices[i], wrap_index(indices[i], dim, ctx));
  }
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < n; ++i)
      copy_elements(data, (o * dim + indices[i]) * inner, *ctx.output(0), (o * n + i) * inner, inner);
  return Status::ok();
}

// GatherElements / ScatterElements: data offset of each index position, the axis coordinate
// replaced by the index value.
Result<std::vector<int64_t>> element_offsets(const KernelContext& ctx, const std::vector<int64_t>& data_shape,
                                             const Tensor& indices_tensor, size_t axis) {
  KILN_RETURN_IF_ERROR(check_element_indices_shape(ctx, data_shape, indices_tensor.shape(), axis));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> indices, read_int64s(indices_tensor, "indices"));
  const std::vector<int64_t> strides = contiguous_strides(data_shape);
  std::vector<int64_t> offsets(indices.size());
  Status status;
  for_each_index(indices_tensor.shape(), [&](const std::vector<int64_t>& idx, int64_t i) {
    Result<int64_t> v = wrap_index(indices[i], data_shape[axis], ctx);
    if (!v.is_ok()) status = v.status();
    int64_t off = 0;
    for (size_t d = 0; d < idx.size(); ++d) off += (d == axis ? (v.is_ok() ? v.value() : 0) : idx[d]) * strides[d];
    offsets[i] = off;
  });
  if (!status.is_ok()) return status;
  return offsets;
}

Status same_rank(const InferenceContext& ctx, size_t a, size_t b) {
  const auto& sa = ctx.input_type(a).shape;
  const auto& sb = ctx.input_type(b).shape;
  if (sa && sb && sa->rank() != sb->rank()) return ctx.error("data and indices must have the same rank");
  return Status::ok();
}

Status gather_elements_infer(InferenceContext& ctx) {
  KILN_RETURN_IF_ERROR(same_rank(ctx, 0, 1));
  if (ctx.input_type(0).shape) KILN_RETURN_IF_ERROR(axis_attr(ctx, static_cast<int64_t>(ctx.input_type(0).shape->rank())).status());
  ctx.set_output_type(0, typed_like(ctx.input_type(0), ctx.input_type(1).shape));
  return Status::ok();
}

Status gather_elements_kernel(KernelContext& ctx) {
  const Tensor& data = *ctx.input(0);
  const size_t axis = static_cast<size_t>(normalize_axis(ctx.node().attr_int("axis", 0), data.rank()).value());
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> offsets, element_offsets(ctx, data.shape(), *ctx.input(1), axis));
  gather_by_offsets(data, *ctx.output(0), offsets);
  return Status::ok();
}

// GatherND / ScatterND addressing: for each index tuple (after the batch dims), the offset of the
// addressed slice in data and the slice length.
struct NdAddressing {
  std::vector<int64_t> offsets;
  int64_t slice = 1;
};

Result<NdAddressing> nd_addressing(const KernelContext& ctx, const std::vector<int64_t>& data_shape,
                                   const Tensor& indices_tensor, size_t batch_dims) {
  const std::vector<int64_t>& ishape = indices_tensor.shape();
  if (ishape.empty()) return ctx.error("indices must have rank >= 1");
  const size_t last = static_cast<size_t>(ishape.back());
  if (batch_dims + last > data_shape.size())
    return ctx.error("indices address " + std::to_string(last) + " dims past " + std::to_string(batch_dims) +
                     " batch dims of a rank-" + std::to_string(data_shape.size()) + " tensor");
  for (size_t d = 0; d < batch_dims; ++d)
    if (ishape[d] != data_shape[d]) return ctx.error("indices and data disagree on batch dim " + std::to_string(d));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> indices, read_int64s(indices_tensor, "indices"));
  const std::vector<int64_t> strides = contiguous_strides(data_shape);
  NdAddressing a;
  a.slice = dims_product(data_shape, batch_dims + last, data_shape.size());
  const int64_t tuples = last == 0 ? dims_product(ishape, 0, ishape.size() - 1)
                                   : static_cast<int64_t>(indices.size() / last);
  const int64_t batches = dims_product(ishape, 0, batch_dims);
  const int64_t per_batch = batches == 0 ? 0 : tuples / batches;
  const int64_t batch_stride = batch_dims == 0 ? 0 : strides[batch_dims - 1];
  for (int64_t t = 0; t < tuples; ++t) {
    int64_t off = (t / std::max<int64_t>(per_batch, 1)) * batch_stride;
    for (size_t k = 0; k < last; ++k) {
      KILN_ASSIGN_OR_RETURN(int64_t v, wrap_index(indices[t * last + k], data_shape[batch_dims + k], ctx));
      off += v * strides[batch_dims + k];
    }
    a.offsets.push_back(off);
  }
  return a;
}

Status gather_nd_infer(InferenceContext& ctx) {
  const ir::TensorType& data = ctx.input_type(0);
  const ir::TensorType& indices = ctx.input_type(1);
  const int64_t b = ctx.node().attr_int("batch_dims", 0);
  if (!data.shape || !indices.shape || indices.shape->rank() == 0 || !indices.shape->dims().back().is_static()) {
    ctx.set_output_type(0, typed_like(data, std::nullopt));
    return Status::ok();
  }
  const int64_t last = indices.shape->dims().back().value();
  const int64_t r = static_cast<int64_t>(data.shape->rank()), q = static_cast<int64_t>(indices.shape->rank());
  if (b < 0 || b >= q || b + last > r) return ctx.error("batch_dims and the index length do not fit the data rank");
  std::vector<ir::Dim> dims(indices.shape->dims().begin(), indices.shape->dims().end() - 1);
  dims.insert(dims.end(), data.shape->dims().begin() + b + last, data.shape->dims().end());
  ctx.set_output_type(0, typed_like(data, ir::Shape(dims)));
  return Status::ok();
}

Status gather_nd_kernel(KernelContext& ctx) {
  const Tensor& data = *ctx.input(0);
  const size_t b = static_cast<size_t>(ctx.node().attr_int("batch_dims", 0));
  KILN_ASSIGN_OR_RETURN(NdAddressing a, nd_addressing(ctx, data.shape(), *ctx.input(1), b));
  for (size_t t = 0; t < a.offsets.size(); ++t)
    copy_elements(data, a.offsets[t], *ctx.output(0), static_cast<int64_t>(t) * a.slice, a.slice);
  return Status::ok();
}

// ---- Scatter family: copy data, then write (or combine) updates ----

// The reduction attribute (ScatterElements/ScatterND 16+: add, mul; 18+: max, min), applied as
// dst = combine(dst, update).
Result<std::string> scatter_reduction(const ir::Node& node) {
  const std::string r = node.attr_string("reduction", "none");
  if (r != "none" && r != "add" && r != "mul" && r != "max" && r != "min")
    return invalid_model(node.describe() + ": unknown reduction '" + r + "'");
  if ((r == "max" || r == "min") && node.opset_version < 18)
    return invalid_model(node.describe() + ": reduction '" + r + "' needs opset 18 (opset " + std::to_string(node.opset_version) + ")");
  return r;
}

Status scatter_write(KernelContext& ctx, const std::vector<int64_t>& offsets, int64_t slice) {
  const Tensor& updates = *ctx.input(2);
  Tensor& out = *ctx.output(0);
  KILN_ASSIGN_OR_RETURN(std::string reduction, scatter_reduction(ctx.node()));
  if (static_cast<int64_t>(offsets.size()) * slice != updates.element_count())
    return ctx.error("updates have " + std::to_string(updates.element_count()) + " elements, expected " +
                     std::to_string(static_cast<int64_t>(offsets.size()) * slice));
  copy_all_elements(*ctx.input(0), out);
  if (reduction == "none") {
    for (size_t t = 0; t < offsets.size(); ++t)
      copy_elements(updates, static_cast<int64_t>(t) * slice, out, offsets[t], slice);
    return Status::ok();
  }
  bool numeric = false;
  visit_dtype(out.dtype(), [&]<class T>() {
    if constexpr (!std::is_same_v<T, std::string> && !std::is_same_v<T, bool>) {
      numeric = true;
      T* o = out.data<T>();
      const T* u = updates.data<T>();
      for (size_t t = 0; t < offsets.size(); ++t)
        for (int64_t k = 0; k < slice; ++k) {
          const double a = to_double(o[offsets[t] + k]), v = to_double(u[static_cast<int64_t>(t) * slice + k]);
          const double r = reduction == "add" ? a + v : reduction == "mul" ? a * v : reduction == "max" ? std::max(a, v) : std::min(a, v);
          o[offsets[t] + k] = from_double<T>(r);
        }
    }
  });
  if (!numeric) return ctx.error("reduction '" + reduction + "' needs a numeric tensor");
  return Status::ok();
}

Status scatter_infer(InferenceContext& ctx) {
  KILN_RETURN_IF_ERROR(check_same_dtype(ctx, 0, 2));
  ctx.set_output_type(0, ctx.input_type(0));
  return Status::ok();
}

Status scatter_elements_kernel(KernelContext& ctx) {
  const Tensor& data = *ctx.input(0);
  const size_t axis = static_cast<size_t>(normalize_axis(ctx.node().attr_int("axis", 0), data.rank()).value());
  if (ctx.input(1)->shape() != ctx.input(2)->shape()) return ctx.error("indices and updates must have the same shape");
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> offsets, element_offsets(ctx, data.shape(), *ctx.input(1), axis));
  return scatter_write(ctx, offsets, 1);
}

Status scatter_nd_kernel(KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(NdAddressing a, nd_addressing(ctx, ctx.input(0)->shape(), *ctx.input(1), 0));
  return scatter_write(ctx, a.offsets, a.slice);
}

// ---- Tile ----

Status tile_infer(InferenceContext& ctx) {
  const ir::TensorType& in = ctx.input_type(0);
  KILN_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> repeats, known_int64s(ctx, 1, "repeats"));
  if (!in.shape) {
    ctx.set_output_type(0, typed_like(in, std::nullopt));
    return Status::ok();
  }
  ir::Shape out = *in.shape;
  if (!repeats) {
    ctx.set_output_type(0, typed_like(in, unknown_shape(out.rank())));
    return Status::ok();
  }
  if (repeats->size() != out.rank())
    return ctx.error("repeats has " + std::to_string(repeats->size()) + " entries for rank " + std::to_string(out.rank()));
  for (size_t d = 0; d < out.rank(); ++d) {
    const int64_t r = (*repeats)[d];
    if (r < 0) return ctx.error("repeats must not be negative");
    ir::Dim& dim = out.dims()[d];
    if (dim.is_static()) dim = dim.value() * r;
    else if (r != 1) dim = r == 0 ? ir::Dim(0) : ir::Dim::unknown();
  }
  ctx.set_output_type(0, typed_like(in, out));
  return Status::ok();
}

Status tile_kernel(KernelContext& ctx) {
  const Tensor& in = *ctx.input(0);
  const std::vector<int64_t> strides = contiguous_strides(in.shape());
  std::vector<int64_t> offsets(static_cast<size_t>(ctx.output(0)->element_count()));
  for_each_index(ctx.output(0)->shape(), [&](const std::vector<int64_t>& idx, int64_t i) {
    int64_t off = 0;
    for (size_t d = 0; d < idx.size(); ++d) off += (idx[d] % in.shape()[d]) * strides[d];
    offsets[i] = off;
  });
  gather_by_offsets(in, *ctx.output(0), offsets);
  return Status::ok();
}

// ---- Pad ----

}  // namespace

Result<PadMode> pad_mode(const ir::Node& node) {
  const std::string m = node.attr_string("mode", "constant");
  if (m == "constant") return PadMode::kConstant;
  if (m == "reflect") return PadMode::kReflect;
  if (m == "edge") return PadMode::kEdge;
  if (m == "wrap" && node.opset_version >= 19) return PadMode::kWrap;
  return invalid_model(node.describe() + ": unknown pad mode '" + m + "'");
}

int64_t pad_source(int64_t o, int64_t begin, int64_t n, PadMode mode) {
  int64_t x = o - begin;
  if (x >= 0 && x < n) return x;
  if (mode == PadMode::kConstant || n == 0) return -1;
  if (mode == PadMode::kWrap) return ((x % n) + n) % n;
  if (mode == PadMode::kEdge || n == 1) return std::clamp<int64_t>(x, 0, n - 1);
  const int64_t period = 2 * (n - 1);
  x = ((x % period) + period) % period;
  return x < n ? x : period - x;
}

namespace {

// Pads over every axis (begins then ends, 2 x rank) from `pads` over the listed `axes` (opset 18's
// input 3; all axes in order when absent), checked: InvalidModel naming the node.
Result<std::vector<int64_t>> pads_over_all_axes(const std::vector<int64_t>& pads, const std::optional<std::vector<int64_t>>& axes,
                                                size_t rank, const ir::Node& node) {
  const size_t listed = axes ? axes->size() : rank;
  if (pads.size() != 2 * listed)
    return invalid_model(node.describe() + ": pads has " + std::to_string(pads.size()) + " entries, expected " +
                         std::to_string(2 * listed) + (axes ? " for " + std::to_string(listed) + " axes" : " for rank " + std::to_string(rank)));
  if (!axes) return pads;
  std::vector<int64_t> all(2 * rank, 0);
  std::vector<bool> seen(rank, false);
  for (size_t i = 0; i < listed; ++i) {
    KILN_ASSIGN_OR_RETURN(const int64_t axis, normalize_axis((*axes)[i], static_cast<int64_t>(rank), "axes"));
    const auto a = static_cast<size_t>(axis);
    if (seen[a]) return invalid_model(node.describe() + ": axis " + std::to_string((*axes)[i]) + " is repeated in axes");
    seen[a] = true;
    all[a] = pads[i];
    all[rank + a] = pads[listed + i];
  }
  return all;
}

}  // namespace

Result<std::vector<int64_t>> run_time_pads(const KernelContext& ctx, PadMode mode) {
  const Tensor& in = *ctx.input(0);
  const Tensor& out = *ctx.output(0);
  std::vector<int64_t> given = ctx.node().attr_ints("pads");
  if (ctx.opset() >= 11) {
    KILN_ASSIGN_OR_RETURN(given, read_int64s(*ctx.input(1), "pads"));
  }
  std::optional<std::vector<int64_t>> axes;
  if (ctx.opset() >= 18 && ctx.input(3)) {
    KILN_ASSIGN_OR_RETURN(axes, read_int64s(*ctx.input(3), "axes"));
  }
  const size_t rank = in.shape().size();
  KILN_ASSIGN_OR_RETURN(const std::vector<int64_t> pads, pads_over_all_axes(given, axes, rank, ctx.node()));
  for (size_t d = 0; d < rank; ++d) {
    if (in.shape()[d] + pads[d] + pads[d + rank] != out.shape()[d])
      return ctx.error("pads give axis " + std::to_string(d) + " size " + std::to_string(in.shape()[d] + pads[d] + pads[d + rank]) +
                       ", the planned output has " + std::to_string(out.shape()[d]));
    if (mode != PadMode::kConstant && in.shape()[d] == 0 && out.shape()[d] > 0) return ctx.error("cannot pad an empty axis in this mode");
  }
  return pads;
}

namespace {

Status pad_infer(InferenceContext& ctx) {
  const ir::TensorType& in = ctx.input_type(0);
  KILN_RETURN_IF_ERROR(pad_mode(ctx.node()).status());
  std::optional<std::vector<int64_t>> pads, axes;
  if (ctx.opset() < 11) {
    pads = ctx.node().attr_ints("pads");
  } else {
    KILN_ASSIGN_OR_RETURN(pads, known_int64s(ctx, 1, "pads"));
  }
  const bool axes_given = ctx.opset() >= 18 && ctx.has_input(3);
  if (axes_given) {
    KILN_ASSIGN_OR_RETURN(axes, known_int64s(ctx, 3, "axes"));
  }
  if (!in.shape) {
    ctx.set_output_type(0, typed_like(in, std::nullopt));
    return Status::ok();
  }
  ir::Shape out = *in.shape;
  const size_t rank = out.rank();
  if (!pads || (axes_given && !axes)) {
    ctx.set_output_type(0, typed_like(in, unknown_shape(rank)));
    return Status::ok();
  }
  KILN_ASSIGN_OR_RETURN(pads, pads_over_all_axes(*pads, axes, rank, ctx.node()));
  for (size_t d = 0; d < rank; ++d) {
    ir::Dim& dim = out.dims()[d];
    const int64_t total = (*pads)[d] + (*pads)[d + rank];
    if (dim.is_static()) {
      if (dim.value() + total < 0) return ctx.error("pads crop axis " + std::to_string(d) + " below zero size");
      dim = dim.value() + total;
    } else if (total != 0) {
      dim = ir::Dim::unknown();
    }
  }
  ctx.set_output_type(0, typed_like(in, out));
  return Status::ok();
}

Status pad_kernel(KernelContext& ctx) {
  const Tensor& in = *ctx.input(0);
  Tensor& out = *ctx.output(0);
  KILN_ASSIGN_OR_RETURN(PadMode mode, pad_mode(ctx.node()));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> pads, run_time_pads(ctx, mode));
  const size_t rank = in.shape().size();
  const std::vector<int64_t> strides = contiguous_strides(in.shape());
  std::vector<int64_t> offsets(static_cast<size_t>(out.element_count()));
  for_each_index(out.shape(), [&](const std::vector<int64_t>& idx, int64_t i) {
    int64_t off = 0;
    for (size_t d = 0; d < rank && off >= 0; ++d) {
      const int64_t x = pad_source(idx[d], pads[d], in.shape()[d], mode);
      off = x < 0 ? -1 : off + x * strides[d];
    }
    offsets[i] = off;
  });
  Status status = Status::ok();
  visit_dtype(in.dtype(), [&]<class T>() {
    Result<T> fill = pad_constant<T>(ctx);
    if (!fill.is_ok()) {
      status = fill.status();
      return;
    }
    const T* src = in.data<T>();
    T* dst = out.data<T>();
    for (size_t i = 0; i < offsets.size(); ++i) dst[i] = offsets[i] < 0 ? fill.value() : src[offsets[i]];
  });
  return status;
}

// ---- Trilu ----

Status trilu_infer(InferenceContext& ctx) {
  const ir::TensorType& in = ctx.input_type(0);
  if (in.shape && in.shape->rank() < 2) return ctx.error("input must have rank >= 2");
  ctx.set_output_type(0, in);
  return Status::ok();
}

Status trilu_kernel(KernelContext& ctx) {
  const Tensor& in = *ctx.input(0);
  int64_t k = 0;
  if (ctx.input(1)) {
    KILN_ASSIGN_OR_RETURN(std::vector<int64_t> kv, read_int64s(*ctx.input(1), "k"));
    if (kv.size() != 1) return ctx.error("k must hold one value");
    k = kv[0];
  }
  const bool upper = ctx.node().attr_int("upper", 1) != 0;
  const int64_t rows = in.shape()[in.shape().size() - 2], cols = in.shape().back();
  std::vector<int64_t> offsets(static_cast<size_t>(in.element_count()));
  for (size_t i = 0; i < offsets.size(); ++i) {
    const int64_t r = (static_cast<int64_t>(i) / cols) % rows, c = static_cast<int64_t>(i) % cols;
    const bool keep = upper ? c - r >= k : c - r <= k;
    offsets[i] = keep ? static_cast<int64_t>(i) : -1;
  }
  gather_by_offsets(in, *ctx.output(0), offsets);
  return Status::ok();
}

// ---- CenterCropPad (opset 18): each listed axis cropped or zero-padded to its size, centred ----

// The listed axes (`axes`, or all), each in [0, rank).
Result<std::vector<size_t>> crop_pad_axes(const ir::Node& node, size_t rank, size_t sizes) {
  std::vector<int64_t> given = node.attr_ints("axes");
  if (given.empty())
    for (size_t d = 0; d < rank; ++d) given.push_back(static_cast<int64_t>(d));
  if (given.size() != sizes)
    return invalid_model(node.describe() + ": shape has " + std::to_string(sizes) + " values for " + std::to_string(given.size()) + " axes");
  std::vector<size_t> axes;
  for (int64_t a : given) {
    KILN_ASSIGN_OR_RETURN(const int64_t d, normalize_axis(a, static_cast<int64_t>(rank)));
    if (std::find(axes.begin(), axes.end(), static_cast<size_t>(d)) != axes.end())
      return invalid_model(node.describe() + ": axis " + std::to_string(a) + " is repeated");
    axes.push_back(static_cast<size_t>(d));
  }
  return axes;
}

Status center_crop_pad_infer(InferenceContext& ctx) {
  const ir::TensorType& in = ctx.input_type(0);
  KILN_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> shape, known_int64s(ctx, 1, "shape"));
  if (!in.shape) {
    ctx.set_output_type(0, typed_like(in, std::nullopt));
    return Status::ok();
  }
  ir::Shape out = *in.shape;
  const auto& shape_type = ctx.input_type(1).shape;
  const size_t count = shape ? shape->size() : shape_type && shape_type->is_static() ? static_cast<size_t>(shape_element_count(shape_type->static_dims())) : 0;
  if (!shape && count == 0) {
    ctx.set_output_type(0, typed_like(in, unknown_shape(in.shape->rank())));
    return Status::ok();
  }
  KILN_ASSIGN_OR_RETURN(const std::vector<size_t> axes, crop_pad_axes(ctx.node(), in.shape->rank(), count));
  for (size_t i = 0; i < axes.size(); ++i) {
    if (shape && (*shape)[i] < 0) return ctx.error("shape must not be negative");
    out.dims()[axes[i]] = shape ? ir::Dim((*shape)[i]) : ir::Dim::unknown();
  }
  ctx.set_output_type(0, typed_like(in, out));
  return Status::ok();
}

// Output element -> input element: on a cropped axis the input starts (in - out) / 2 in; on a
// padded one the output does (out - in) / 2 in, and elements outside the input are zero.
Status center_crop_pad_kernel(KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  Tensor& y = *ctx.output(0);
  const size_t rank = x.shape().size();
  std::vector<int64_t> shift(rank, 0);  // input index = output index + shift
  for (size_t d = 0; d < rank; ++d) {
    const int64_t in = x.shape()[d], out = y.shape()[d];
    shift[d] = in >= out ? (in - out) / 2 : -((out - in) / 2);
  }
  const std::vector<int64_t> strides = contiguous_strides(x.shape());
  std::vector<int64_t> offsets(static_cast<size_t>(y.element_count()));
  for_each_index(y.shape(), [&](const std::vector<int64_t>& idx, int64_t i) {
    int64_t offset = 0;
    for (size_t d = 0; d < rank && offset >= 0; ++d) {
      const int64_t j = idx[d] + shift[d];
      offset = j < 0 || j >= x.shape()[d] ? -1 : offset + j * strides[d];
    }
    offsets[static_cast<size_t>(i)] = offset;
  });
  gather_by_offsets(x, y, offsets);
  return Status::ok();
}

// ---- DepthToSpace / SpaceToDepth: a reshape, a transpose and a reshape ----

}  // namespace

Result<BlockRearrange> block_rearrange(const ir::Node& node, const std::vector<int64_t>& in, bool to_space) {
  const int64_t b = node.attr_int("blocksize", 0);
  if (b <= 0) return invalid_model(node.describe() + ": blocksize must be positive");
  if (in.size() != 4) return invalid_model(node.describe() + ": input must have rank 4");
  const int64_t n = in[0], c = in[1], h = in[2], w = in[3];
  if (to_space) {
    if (c % (b * b) != 0) return invalid_model(node.describe() + ": channels not divisible by blocksize^2");
    if (node.attr_string("mode", "DCR") == "CRD") return BlockRearrange{{n, c / (b * b), b, b, h, w}, {0, 1, 4, 2, 5, 3}};
    return BlockRearrange{{n, b, b, c / (b * b), h, w}, {0, 3, 4, 1, 5, 2}};
  }
  if (h % b != 0 || w % b != 0) return invalid_model(node.describe() + ": spatial dims not divisible by blocksize");
  return BlockRearrange{{n, c, h / b, b, w / b, b}, {0, 3, 5, 1, 2, 4}};
}

namespace {

// Output [N, C', H', W'] of the rearrangement: the transposed view's dims merged back to 4-d.
std::vector<ir::Dim> block_output_dims(const std::vector<ir::Dim>& in, int64_t b, bool to_space) {
  auto scale = [](const ir::Dim& d, int64_t num, int64_t den) {
    return d.is_static() ? ir::Dim(d.value() * num / den) : ir::Dim::unknown();
  };
  if (to_space) return {in[0], scale(in[1], 1, b * b), scale(in[2], b, 1), scale(in[3], b, 1)};
  return {in[0], scale(in[1], b * b, 1), scale(in[2], 1, b), scale(in[3], 1, b)};
}

template <bool kToSpace>
Status block_infer(InferenceContext& ctx) {
  const ir::TensorType& in = ctx.input_type(0);
  if (!in.shape) {
    ctx.set_output_type(0, typed_like(in, std::nullopt));
    return Status::ok();
  }
  std::vector<int64_t> probe;
  for (const ir::Dim& d : in.shape->dims()) probe.push_back(d.is_static() ? d.value() : 0);
  KILN_RETURN_IF_ERROR(block_rearrange(ctx.node(), probe, kToSpace).status());
  const int64_t b = ctx.node().attr_int("blocksize", 1);
  ctx.set_output_type(0, typed_like(in, ir::Shape(block_output_dims(in.shape->dims(), b, kToSpace))));
  return Status::ok();
}

template <bool kToSpace>
Status block_kernel(KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(BlockRearrange r, block_rearrange(ctx.node(), ctx.input(0)->shape(), kToSpace));
  gather_by_offsets(*ctx.input(0), *ctx.output(0), permuted_offsets(r.view, r.perm));
  return Status::ok();
}

}  // namespace

Result<StridedView> slice_view(const ir::Node& node, const std::vector<int64_t>& in_shape,
                               const std::vector<const Tensor*>& args) {
  SliceArgs a;
  if (node.opset_version < 10) {
    a.starts = node.attr_ints("starts");
    a.ends = node.attr_ints("ends");
    a.axes = node.attr_ints("axes");
  } else {
    std::vector<int64_t>* targets[] = {&a.starts, &a.ends, &a.axes, &a.steps};
    const char* names[] = {"starts", "ends", "axes", "steps"};
    for (size_t i = 0; i < 4 && i < args.size(); ++i) {
      if (!args[i]) continue;
      KILN_ASSIGN_OR_RETURN(*targets[i], read_int64s(*args[i], names[i]));
    }
  }
  KILN_RETURN_IF_ERROR(validate_slice(a, static_cast<int64_t>(in_shape.size()), node));
  StridedView view{0, contiguous_strides(in_shape)};
  for (size_t i = 0; i < a.axes.size(); ++i) {
    const size_t axis = static_cast<size_t>(a.axes[i]);
    view.base += slice_axis(in_shape[axis], a.starts[i], a.ends[i], a.steps[i]).start * view.strides[axis];
    view.strides[axis] *= a.steps[i];
  }
  return view;
}

void register_data_movement_ops(OpRegistry& r) {
  for (int v : {1, 13, 21}) r.add({"", "Transpose", v, with_required_inputs(1, transpose_infer), transpose_kernel});
  for (int v : {1, 4, 11, 13}) r.add({"", "Concat", v, with_required_inputs(1, concat_infer), concat_kernel});
  for (int v : {2, 11, 13, 18}) r.add({"", "Split", v, with_required_inputs(1, split_infer), split_kernel});
  for (int v : {1, 10, 11, 13}) r.add({"", "Slice", v, with_required_inputs(1, slice_infer), slice_kernel});
  for (int v : {1, 11, 13}) r.add({"", "Gather", v, with_required_inputs(2, gather_infer), gather_kernel});
  for (int v : {11, 13}) r.add({"", "GatherElements", v, with_required_inputs(2, gather_elements_infer), gather_elements_kernel});
  for (int v : {11, 12, 13}) r.add({"", "GatherND", v, with_required_inputs(2, gather_nd_infer), gather_nd_kernel});
  r.add({"", "Scatter", 9, with_required_inputs(3, scatter_infer), scatter_elements_kernel});
  for (int v : {11, 13, 16, 18}) r.add({"", "ScatterElements", v, with_required_inputs(3, scatter_infer), scatter_elements_kernel});
  for (int v : {11, 13, 16, 18}) r.add({"", "ScatterND", v, with_required_inputs(3, scatter_infer), scatter_nd_kernel});
  for (int v : {6, 13}) r.add({"", "Tile", v, with_required_inputs(2, tile_infer), tile_kernel});
  for (int v : {2, 11, 13, 18, 19, 21}) r.add({"", "Pad", v, with_required_inputs(v < 11 ? 1 : 2, pad_infer), pad_kernel});
  r.add({"", "CenterCropPad", 18, with_required_inputs(2, center_crop_pad_infer), center_crop_pad_kernel});
  r.add({"", "Trilu", 14, with_required_inputs(1, trilu_infer), trilu_kernel});
  for (int v : {1, 11, 13}) r.add({"", "DepthToSpace", v, with_required_inputs(1, block_infer<true>), block_kernel<true>});
  for (int v : {1, 13}) r.add({"", "SpaceToDepth", v, with_required_inputs(1, block_infer<false>), block_kernel<false>});
}

}  // namespace kiln::ops
