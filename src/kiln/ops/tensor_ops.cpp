// Tensor ops that index, select or scan: CumSum, OneHot, TopK, Compress, NonZero, Unique,
// ReverseSequence, Det, LRN. Output shapes that depend on input values (TopK's K,
// Compress's condition, NonZero's data) come from the rule once those values are known.
#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <optional>

#include "kiln/ops/data_movement.h"
#include "kiln/ops/determinant.h"
#include "kiln/ops/family_support.h"
#include "kiln/ops/op_families.h"
#include "kiln/ops/op_helpers.h"
#include "kiln/ops/local_normalizations.h"
#include "kiln/ops/onehot.h"
#include "kiln/ops/op_registry.h"
#include "kiln/ops/topk_order.h"

namespace kiln::ops {

namespace {

using NumericNoBool = NumericTypes;

Status same_as_input_infer(InferenceContext& ctx) {
  ctx.set_output_type(0, ctx.input_type(0));
  return Status::ok();
}

// ---- CumSum ----

Status cumsum_kernel(KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  KILN_ASSIGN_OR_RETURN(auto axis_values, read_int64s(*ctx.input(1), "axis"));
  if (axis_values.size() != 1) return ctx.error("axis must be a scalar");
  KILN_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(axis_values[0], x.rank()));
  const bool exclusive = ctx.node().attr_int("exclusive", 0) != 0, reverse = ctx.node().attr_int("reverse", 0) != 0;
  const int64_t len = x.shape()[axis];
  const int64_t outer = dims_product(x.shape(), 0, axis), inner = dims_product(x.shape(), axis + 1, x.shape().size());
  const bool ok = dispatch<NumericNoBool>(x.dtype(), [&]<class T>() {
    const T* in = x.data<T>();
    T* out = ctx.output(0)->data<T>();
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        Compute<T> sum = 0;
        for (int64_t step = 0; step < len; ++step) {
          const int64_t k = reverse ? len - 1 - step : step;
          const int64_t at = (o * len + k) * inner + i;
          if (exclusive) {
            out[at] = store<T>(sum);
            sum += load(in[at]);
          } else {
            sum += load(in[at]);
            out[at] = store<T>(sum);
          }
        }
      }
  });
  return ok ? Status::ok() : ctx.error(std::string("unsupported element type ") + dtype_name(x.dtype()));
}

// ---- OneHot ----

Status onehot_infer(InferenceContext& ctx) {
  const ir::TensorType& idx = ctx.input_type(0);
  ir::TensorType out{ctx.input_type(2).dtype};
  if (idx.shape) {
    const auto rank = static_cast<int64_t>(idx.shape->rank()) + 1;
    KILN_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(ctx.node().attr_int("axis", -1), rank));
    std::vector<ir::Dim> dims = idx.shape->dims();
    ir::Dim depth = ir::Dim::unknown();
    if (const Tensor* d = ctx.input_value(1)) {
      KILN_ASSIGN_OR_RETURN(const int64_t classes, onehot_depth(ctx, *d));
      depth = ir::Dim(classes);
    }
    dims.insert(dims.begin() + axis, depth);
    out.shape = ir::Shape(dims);
  }
  ctx.set_output_type(0, out);
  return Status::ok();
}

Status onehot_kernel(KernelContext& ctx) {
  const Tensor& indices = *ctx.input(0);
  const Tensor& values = *ctx.input(2);
  Tensor& out = *ctx.output(0);
  if (values.element_count() != 2) return ctx.error("values must hold [off, on]");
  KILN_ASSIGN_OR_RETURN(const int64_t depth, onehot_depth(ctx, *ctx.input(1)));
  // Negative indices count back from depth since opset 11; before, they are out of range.
  const bool wrap_negative = ctx.opset() >= 11;
  KILN_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(ctx.node().attr_int("axis", -1), out.rank()));
  const int64_t outer = dims_product(out.shape(), 0, axis), inner = dims_product(out.shape(), axis + 1, out.shape().size());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t d = 0; d < depth; ++d)
      for (int64_t i = 0; i < inner; ++i) {
        auto index = static_cast<int64_t>(element_as_double(indices, o * inner + i));
        if (index < 0 && wrap_negative) index += depth;
        copy_elements(values, index == d ? 1 : 0, out, (o * depth + d) * inner + i, 1);
      }
  return Status::ok();
}

// ---- TopK ----

Result<std::optional<int64_t>> topk_k(const InferenceContext& ctx) {
  if (ctx.opset() < 10) return std::optional<int64_t>(ctx.node().attr_int("k", 1));
  KILN_ASSIGN_OR_RETURN(auto k, known_int64s(ctx, 1, "K"));
  if (!k) return std::optional<int64_t>();
  if (k->size() != 1 || (*k)[0] < 0) return ctx.error("K must be one non-negative value");
  return std::optional<int64_t>((*k)[0]);
}

Status topk_infer(InferenceContext& ctx) {
  const ir::TensorType& x = ctx.input_type(0);
  ir::TensorType values{x.dtype}, indices{DType::kInt64};
  if (x.shape) {
    KILN_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(ctx.node().attr_int("axis", -1), static_cast<int64_t>(x.shape->rank())));
    KILN_ASSIGN_OR_RETURN(std::optional<int64_t> k, topk_k(ctx));
    std::vector<ir::Dim> dims = x.shape->dims();
    dims[axis] = k ? ir::Dim(*k) : ir::Dim::unknown();
    if (k && dims[axis].value() > 0 && x.shape->dims()[axis].is_static() && *k > x.shape->dims()[axis].value())
      return ctx.error("K is larger than the axis");
    values.shape = indices.shape = ir::Shape(dims);
  }
  ctx.set_output_type(0, values);
  ctx.set_output_type(1, indices);
  return Status::ok();
}

Status topk_kernel(KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  Tensor& values = *ctx.output(0);
  KILN_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(ctx.node().attr_int("axis", -1), x.rank()));
  const int64_t len = x.shape()[axis], k = values.shape()[axis];
  const bool largest = ctx.node().attr_int("largest", 1) != 0;
  const int64_t outer = dims_product(x.shape(), 0, axis), inner = dims_product(x.shape(), axis + 1, x.shape().size());
  std::vector<int64_t> order(static_cast<size_t>(len));
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      auto at = [&](int64_t j) { return (o * len + j) * inner + i; };
      std::iota(order.begin(), order.end(), 0);
      std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
        return topk_before(element_as_double(x, at(a)), a, element_as_double(x, at(b)), b, largest);
      });
      for (int64_t j = 0; j < k; ++j) {
        copy_elements(x, at(order[j]), values, (o * k + j) * inner + i, 1);
        if (Tensor* idx = ctx.output(1)) idx->data<int64_t>()[(o * k + j) * inner + i] = order[j];
      }
    }
  return Status::ok();
}

// ---- Compress and NonZero ----

// Positions along the axis (or of the flattened input) that the condition keeps.
std::vector<int64_t> kept(const Tensor& condition, int64_t limit) {
  std::vector<int64_t> out;
  for (int64_t i = 0; i < std::min(condition.element_count(), limit); ++i)
    if (condition.data<bool>()[i]) out.push_back(i);
  return out;
}

Status compress_infer(InferenceContext& ctx) {
  const ir::TensorType& x = ctx.input_type(0);
  if (ctx.input_type(1).dtype != DType::kBool) return ctx.error("condition must be bool");
  ir::TensorType out{x.dtype};
  const Tensor* cond = ctx.input_value(1);
  if (x.shape) {
    std::vector<ir::Dim> dims = x.shape->dims();
    if (ctx.node().has_attr("axis")) {
      KILN_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(ctx.node().attr_int("axis", 0), static_cast<int64_t>(dims.size())));
      if (cond && dims[axis].is_static()) dims[axis] = ir::Dim(static_cast<int64_t>(kept(*cond, dims[axis].value()).size()));
      else dims[axis] = ir::Dim::unknown();
    } else {
      const bool known = cond && x.shape->is_static();
      dims = {known ? ir::Dim(static_cast<int64_t>(kept(*cond, shape_element_count(x.shape->static_dims())).size()))
                    : ir::Dim::unknown()};
    }
    out.shape = ir::Shape(dims);
  }
  ctx.set_output_type(0, out);
  return Status::ok();
}

Status compress_kernel(KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  const Tensor& cond = *ctx.input(1);
  Tensor& out = *ctx.output(0);
  if (!ctx.node().has_attr("axis")) {
    const auto keep = kept(cond, x.element_count());
    for (size_t j = 0; j < keep.size(); ++j) copy_elements(x, keep[j], out, static_cast<int64_t>(j), 1);
    return Status::ok();
  }
  KILN_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(ctx.node().attr_int("axis", 0), x.rank()));
  const int64_t len = x.shape()[axis];
  const auto keep = kept(cond, len);
  const auto kept_len = static_cast<int64_t>(keep.size());
  const int64_t outer = dims_product(x.shape(), 0, axis), inner = dims_product(x.shape(), axis + 1, x.shape().size());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < kept_len; ++j) copy_elements(x, (o * len + keep[j]) * inner, out, (o * kept_len + j) * inner, inner);
  return Status::ok();
}

int64_t count_nonzero(const Tensor& x) {
  int64_t n = 0;
  for (int64_t i = 0; i < x.element_count(); ++i) n += element_as_double(x, i) != 0.0;
  return n;
}

Status nonzero_infer(InferenceContext& ctx) {
  const ir::TensorType& x = ctx.input_type(0);
  const Tensor* value = ctx.input_value(0);
  const ir::Dim rank = x.shape ? ir::Dim(static_cast<int64_t>(x.shape->rank())) : ir::Dim::unknown();
  const ir::Dim count = value ? ir::Dim(count_nonzero(*value)) : ir::Dim::unknown();
  ctx.set_output_type(0, ir::TensorType{DType::kInt64, ir::Shape({rank, count})});
  return Status::ok();
}

Status nonzero_kernel(KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  Tensor& out = *ctx.output(0);
  const int64_t count = out.shape()[1];
  int64_t j = 0;
  for_each_index(x.shape(), [&](const std::vector<int64_t>& index, int64_t linear) {
    if (element_as_double(x, linear) == 0.0) return;
    for (size_t d = 0; d < index.size(); ++d) out.data<int64_t>()[static_cast<int64_t>(d) * count + j] = index[d];
    ++j;
  });
  return Status::ok();
}

// ---- Unique ----

// The slices along `axis` (or the elements, without an axis), deduplicated.
struct UniqueResult {
  std::vector<int64_t> first;    // per unique slice: the index of its first occurrence
  std::vector<int64_t> inverse;  // per input slice: its unique slice
  std::vector<int64_t> counts;
  int64_t slices = 0, inner = 1, outer = 1;
};

UniqueResult find_unique(const Tensor& x, std::optional<int64_t> axis, bool sorted) {
  UniqueResult u;
  const auto& shape = x.shape();
  u.slices = axis ? shape[*axis] : x.element_count();
  u.outer = axis ? dims_product(shape, 0, *axis) : 1;
  u.inner = axis ? dims_product(shape, *axis + 1, shape.size()) : 1;
  auto slice_values = [&](int64_t s) {
    std::vector<double> v;
    for (int64_t o = 0; o < u.outer; ++o)
      for (int64_t i = 0; i < u.inner; ++i) v.push_back(element_as_double(x, (o * u.slices + s) * u.inner + i));
    return v;
  };
  std::vector<std::vector<double>> values;
  for (int64_t s = 0; s < u.slices; ++s) values.push_back(slice_values(s));
  // Each slice's unique slice, found in an ordered index (n log n); a slice holding a NaN equals no
  // other (NaN != NaN), so it is a unique slice of its own and never enters the index.
  std::vector<int64_t> unique_of(static_cast<size_t>(u.slices), -1);
  std::map<std::vector<double>, int64_t> seen;
  for (int64_t s = 0; s < u.slices; ++s) {
    const std::vector<double>& v = values[static_cast<size_t>(s)];
    const bool has_nan = std::any_of(v.begin(), v.end(), [](double e) { return std::isnan(e); });
    const auto [it, inserted] = has_nan ? std::make_pair(seen.end(), true) : seen.emplace(v, static_cast<int64_t>(u.first.size()));
    if (!inserted) {
      unique_of[s] = it->second;
      continue;
    }
    unique_of[s] = static_cast<int64_t>(u.first.size());
    u.first.push_back(s);
  }
  std::vector<int64_t> order(u.first.size());  // unique slice k goes to position rank[k]
  std::iota(order.begin(), order.end(), 0);
  if (sorted)
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return values[u.first[a]] < values[u.first[b]]; });
  std::vector<int64_t> rank(order.size());
  for (size_t k = 0; k < order.size(); ++k) rank[order[k]] = static_cast<int64_t>(k);
  std::vector<int64_t> first(order.size());
  for (size_t k = 0; k < order.size(); ++k) first[k] = u.first[order[k]];
  u.first = first;
  u.counts.assign(u.first.size(), 0);
  for (int64_t s = 0; s < u.slices; ++s) {
    u.inverse.push_back(rank[unique_of[s]]);
    ++u.counts[rank[unique_of[s]]];
  }
  return u;
}

Result<std::optional<int64_t>> unique_axis(const ir::Node& node, int64_t rank) {
  if (!node.has_attr("axis")) return std::optional<int64_t>();
  KILN_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(node.attr_int("axis", 0), rank));
  return std::optional<int64_t>(axis);
}

Status unique_infer(InferenceContext& ctx) {
  const ir::TensorType& x = ctx.input_type(0);
  const Tensor* value = ctx.input_value(0);
  ir::TensorType y{x.dtype}, counts{DType::kInt64, ir::Shape({ir::Dim::unknown()})}, inverse = counts;
  if (value) {
    KILN_ASSIGN_OR_RETURN(std::optional<int64_t> axis, unique_axis(ctx.node(), value->rank()));
    const UniqueResult u = find_unique(*value, axis, ctx.node().attr_int("sorted", 1) != 0);
    const auto k = static_cast<int64_t>(u.first.size());
    std::vector<int64_t> y_shape = value->shape();
    if (axis) y_shape[*axis] = k;
    else y_shape = {k};
    y.shape = ir::Shape::from_static(y_shape);
    counts = ir::make_type(DType::kInt64, {k});
    inverse = ir::make_type(DType::kInt64, {u.slices});
  }
  ctx.set_output_type(0, y);
  for (size_t i = 1; i < ctx.output_count(); ++i) ctx.set_output_type(i, i == 2 ? inverse : counts);
  return Status::ok();
}

Status unique_kernel(KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  KILN_ASSIGN_OR_RETURN(std::optional<int64_t> axis, unique_axis(ctx.node(), x.rank()));
  const UniqueResult u = find_unique(x, axis, ctx.node().attr_int("sorted", 1) != 0);
  const auto k = static_cast<int64_t>(u.first.size());
  Tensor& y = *ctx.output(0);
  for (int64_t o = 0; o < u.outer; ++o)
    for (int64_t j = 0; j < k; ++j)
      copy_elements(x, (o * u.slices + u.first[j]) * u.inner, y, (o * k + j) * u.inner, u.inner);
  auto write = [&](size_t out, const std::vector<int64_t>& v) {
    if (Tensor* t = ctx.output(out)) std::copy(v.begin(), v.end(), t->data<int64_t>());
  };
  write(1, u.first);
  write(2, u.inverse);
  write(3, u.counts);
  return Status::ok();
}

// ---- ReverseSequence ----

Status reverse_sequence_kernel(KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  KILN_ASSIGN_OR_RETURN(auto lens, read_int64s(*ctx.input(1), "sequence_lens"));
  const int64_t batch_axis = ctx.node().attr_int("batch_axis", 1), time_axis = ctx.node().attr_int("time_axis", 0);
  if (x.rank() < 2 || batch_axis == time_axis || batch_axis < 0 || time_axis < 0 || batch_axis > 1 || time_axis > 1)
    return ctx.error("batch_axis and time_axis must be 0 and 1 (either order)");
  if (static_cast<int64_t>(lens.size()) != x.shape()[batch_axis]) return ctx.error("sequence_lens must have one entry per batch");
  for (int64_t len : lens)
    if (len < 0 || len > x.shape()[time_axis])
      return ctx.error("sequence length " + std::to_string(len) + " is outside [0, " + std::to_string(x.shape()[time_axis]) + "]");
  Tensor& out = *ctx.output(0);
  const std::vector<int64_t> strides = contiguous_strides(x.shape());
  for_each_index(x.shape(), [&](const std::vector<int64_t>& index, int64_t linear) {
    const int64_t b = index[batch_axis], t = index[time_axis];
    const int64_t len = lens[static_cast<size_t>(b)];
    const int64_t source_t = t < len ? len - 1 - t : t;
    copy_elements(x, linear + (source_t - t) * strides[time_axis], out, linear, 1);
  });
  return Status::ok();
}

// ---- Det, LRN (floating point, computed in double) ----

template <class F>
Status map_doubles(KernelContext& ctx, const Tensor& in, Tensor& out, F&& fn) {
  const bool ok = dispatch<NumericNoBool>(in.dtype(), [&]<class T>() {
    for (int64_t i = 0; i < in.element_count(); ++i) out.data<T>()[i] = from_double<T>(fn(element_as_double(in, i), i));
  });
  return ok ? Status::ok() : ctx.error(std::string("unsupported element type ") + dtype_name(in.dtype()));
}

Status det_infer(InferenceContext& ctx) {
  const ir::TensorType& x = ctx.input_type(0);
  ir::TensorType out{x.dtype};
  if (x.shape) {
    if (x.shape->rank() < 2) return ctx.error("input must have rank >= 2 ([..., M, M])");
    out.shape = ir::Shape(std::vector<ir::Dim>(x.shape->dims().begin(), x.shape->dims().end() - 2));
  }
  ctx.set_output_type(0, out);
  return Status::ok();
}

// Determinant by Gaussian elimination with partial pivoting.
double determinant(std::vector<double> a, int64_t n) {
  double det = 1;
  for (int64_t c = 0; c < n; ++c) {
    int64_t pivot = c;
    for (int64_t r = c + 1; r < n; ++r)
      if (std::fabs(a[r * n + c]) > std::fabs(a[pivot * n + c])) pivot = r;
    if (a[pivot * n + c] == 0) return 0;
    if (pivot != c) {
      for (int64_t k = 0; k < n; ++k) std::swap(a[c * n + k], a[pivot * n + k]);
      det = -det;
    }
    det *= a[c * n + c];
    for (int64_t r = c + 1; r < n; ++r) {
      const double f = a[r * n + c] / a[c * n + c];
      for (int64_t k = c; k < n; ++k) a[r * n + k] -= f * a[c * n + k];
    }
  }
  return det;
}

Status det_kernel(KernelContext& ctx) { return determinants(ctx, run_in_order); }

Status lrn_kernel(KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  const ir::Node& node = ctx.node();
  const LrnParams p{node.attr_int("size", 0), node.attr_float("alpha", 1e-4f), node.attr_float("beta", 0.75f),
                    node.attr_float("bias", 1.0f)};
  if (p.size <= 0) return ctx.error("size must be positive");
  if (x.rank() < 3) return ctx.error("input must have rank >= 3 (N, C and spatial dims)");
  const int64_t batches = x.shape()[0], channels = x.shape()[1], plane = dims_product(x.shape(), 2, x.shape().size());
  std::vector<double> squares(static_cast<size_t>(plane));
  const bool ok = dispatch<FloatTypes>(x.dtype(), [&]<class T>() {
    for (int64_t n = 0; n < batches; ++n)
      for (int64_t c = 0; c < channels; ++c)
        lrn_plane(x.data<T>() + n * channels * plane, ctx.output(0)->data<T>() + n * channels * plane, channels, plane, c, p,
                  squares.data());
  });
  return ok ? Status::ok() : ctx.error(std::string("unsupported element type ") + dtype_name(x.dtype()));
}

}  // namespace

Status determinants(KernelContext& ctx, const TaskRunner& run) {
  const Tensor& x = *ctx.input(0);
  if (x.rank() < 2) return ctx.error("input must have rank >= 2 ([..., M, M])");
  const int64_t n = x.shape()[x.rank() - 1];
  if (x.shape()[x.rank() - 2] != n) return ctx.error("matrices must be square");
  const int64_t matrices = n == 0 ? ctx.output(0)->element_count() : x.element_count() / (n * n);
  std::vector<double> dets(static_cast<size_t>(matrices));
  run(matrices, [&](int64_t m) {
    std::vector<double> a(static_cast<size_t>(n * n));
    for (int64_t i = 0; i < n * n; ++i) a[static_cast<size_t>(i)] = element_as_double(x, m * n * n + i);
    dets[static_cast<size_t>(m)] = determinant(std::move(a), n);
  });
  return map_doubles(ctx, *ctx.output(0), *ctx.output(0), [&](double, int64_t i) { return dets[static_cast<size_t>(i)]; });
}

void register_tensor_ops(OpRegistry& r) {
  for (int v : {11, 14}) r.add({"", "CumSum", v, with_required_inputs(2, same_as_input_infer), cumsum_kernel});
  for (int v : {9, 11}) r.add({"", "OneHot", v, with_required_inputs(3, onehot_infer), onehot_kernel});
  for (int v : {1, 10, 11}) r.add({"", "TopK", v, with_required_inputs(1, topk_infer), topk_kernel});
  for (int v : {9, 11}) r.add({"", "Compress", v, with_required_inputs(2, compress_infer), compress_kernel});
  for (int v : {9, 13}) r.add({"", "NonZero", v, with_required_inputs(1, nonzero_infer), nonzero_kernel});
  r.add({"", "Unique", 11, with_required_inputs(1, unique_infer), unique_kernel});
  r.add({"", "ReverseSequence", 10, with_required_inputs(2, same_as_input_infer), reverse_sequence_kernel});
  r.add({"", "Det", 11, with_required_inputs(1, det_infer), det_kernel});
  for (int v : {1, 13}) r.add({"", "LRN", v, with_required_inputs(1, same_as_input_infer), lrn_kernel});
}

}  // namespace kiln::ops
