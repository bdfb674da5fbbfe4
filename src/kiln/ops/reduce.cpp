// Reduce* ops (one rule, one kernel, a table of reducers over the shared engine; their axes as
// reduction_axes.h reads them) and ArgMax/ArgMin.
#include <algorithm>
#include <cmath>
#include <limits>

#include "kiln/ops/family_support.h"
#include "kiln/ops/op_families.h"
#include "kiln/ops/op_helpers.h"
#include "kiln/ops/reduce_engine.h"
#include "kiln/ops/reduction_axes.h"

namespace kiln::ops {
namespace {

using ReduceTypes = ConcatTypes<FloatTypes, IntTypes>;

Status reduce_rule(InferenceContext& ctx) {
  const bool input_form = reduction_axes_from_input(ctx.node());
  KILN_RETURN_IF_ERROR(check_input_count(ctx, 1, input_form ? 2 : 1));
  KILN_RETURN_IF_ERROR(check_input_dtype<ReduceTypes>(ctx, 0));
  auto spec = reduction_axes(ctx.node(), ctx.has_input(1), ctx.input_value(1));
  if (!spec.is_ok()) return ctx.error(spec.status().message());
  const ir::TensorType& x = ctx.input_type(0);
  const bool keepdims = ctx.node().attr_int("keepdims", 1) != 0;
  ir::TensorType out{x.dtype, std::nullopt};
  if (x.shape && spec->noop) {
    out.shape = x.shape;
  } else if (x.shape && spec->axes) {
    auto reduced = reduced_dims(*spec->axes, static_cast<int64_t>(x.shape->rank()));
    if (!reduced.is_ok()) return ctx.error(reduced.status().message());
    std::vector<ir::Dim> dims;
    for (size_t d = 0; d < x.shape->rank(); ++d) {
      if (!reduced.value()[d]) dims.push_back((*x.shape)[d]);
      else if (keepdims) dims.emplace_back(1);
    }
    out.shape = ir::Shape(std::move(dims));
  } else if (x.shape && keepdims) {
    out.shape = ir::Shape(std::vector<ir::Dim>(x.shape->rank()));  // rank known, dims not
  }
  ctx.set_output_type(0, std::move(out));
  return Status::ok();
}

// Sums and products accumulate in double for floats and in wrapping uint64 for integers.
template <class T>
using Wide = std::conditional_t<std::is_integral_v<T>, uint64_t, double>;

// Writes a reducer's result (double, wide integer or the element type) as T.
template <class T, class V>
T store_result(V v) {
  if constexpr (std::is_integral_v<T> && std::is_floating_point_v<V>) return saturating_cast<T>(v);
  else if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) return static_cast<T>(static_cast<int64_t>(v));
  else return store<T>(v);
}

// Integer means divide the (wrapped) sum as a signed value for signed types.
template <class T>
auto wide_mean(Wide<T> sum, int64_t count) {
  if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) return static_cast<int64_t>(sum) / count;
  else if constexpr (std::is_integral_v<T>) return sum / static_cast<uint64_t>(count);
  else return sum / static_cast<double>(count);
}

template <class T>
Wide<T> widen(const T& v) {
  if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) return static_cast<uint64_t>(static_cast<int64_t>(v));
  else return static_cast<Wide<T>>(load(v));
}

template <class T>
Wide<T> magnitude(const T& v) {
  if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) return widen<T>(v < 0 ? static_cast<T>(-v) : v);
  else if constexpr (std::is_integral_v<T>) return v;
  else return std::fabs(static_cast<double>(load(v)));
}

// Max/Min let a NaN through, as numpy's reductions do.
template <class V>
bool is_nan_value(V v) {
  if constexpr (std::is_floating_point_v<V>) return std::isnan(v);
  else return false;
}

// Signed view of a wide integer sum for functions of its value (sqrt, log).
template <class T>
double wide_value(Wide<T> v) {
  if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) return static_cast<double>(static_cast<int64_t>(v));
  else return static_cast<double>(v);
}

enum class Reducer { kSum, kMean, kProd, kSumSquare, kL1, kL2, kLogSum, kLogSumExp, kMax, kMin };

// Accumulates with (init, step), then writes finish(state, reduced element count) for each output.
template <class T, class State, class Step, class Finish>
void run_reducer(const Tensor& x, const std::vector<bool>& reduced, Tensor& y, State init, Step step, Finish finish) {
  int64_t count = 1;
  for (size_t d = 0; d < reduced.size(); ++d)
    if (reduced[d]) count *= x.shape()[d];
  const std::vector<State> states = accumulate<State>(x.data<T>(), x.shape(), reduced, init, step);
  T* out = y.data<T>();
  for (size_t i = 0; i < states.size(); ++i) out[i] = store_result<T>(finish(states[i], count));
}

template <class T>
void reduce_typed(Reducer kind, const Tensor& x, const std::vector<bool>& reduced, Tensor& y) {
  using W = Wide<T>;
  using C = Compute<T>;
  const auto sum = [](W s, const T& v) { return static_cast<W>(s + widen(v)); };
  const auto same = [](auto s, int64_t) { return s; };
  switch (kind) {
    case Reducer::kSum: return run_reducer<T>(x, reduced, y, W{0}, sum, same);
    case Reducer::kMean: return run_reducer<T>(x, reduced, y, W{0}, sum, [](W s, int64_t n) { return wide_mean<T>(s, n); });
    case Reducer::kProd:
      return run_reducer<T>(x, reduced, y, W{1}, [](W s, const T& v) { return static_cast<W>(s * widen(v)); }, same);
    case Reducer::kSumSquare:
      return run_reducer<T>(x, reduced, y, W{0}, [](W s, const T& v) { return static_cast<W>(s + widen(v) * widen(v)); }, same);
    case Reducer::kL1:
      return run_reducer<T>(x, reduced, y, W{0}, [](W s, const T& v) { return static_cast<W>(s + magnitude(v)); }, same);
    case Reducer::kL2:
      return run_reducer<T>(x, reduced, y, W{0}, [](W s, const T& v) { return static_cast<W>(s + widen(v) * widen(v)); },
                            [](W s, int64_t) { return std::sqrt(wide_value<T>(s)); });
    case Reducer::kLogSum:
      return run_reducer<T>(x, reduced, y, W{0}, sum, [](W s, int64_t) { return std::log(wide_value<T>(s)); });
    case Reducer::kLogSumExp: {
      // Online log-sum-exp: (running max, sum of exp(v - max)).
      using S = std::pair<double, double>;
      const S init{-std::numeric_limits<double>::infinity(), 0.0};
      // -inf adds exp(-inf) = 0; an element equal to the running max (+inf included) adds 1.
      const auto step = [](S s, const T& v) {
        const double d = static_cast<double>(load(v));
        if (std::isinf(d) && d < 0) return s;
        if (d > s.first) return S{d, s.second * std::exp(s.first - d) + 1.0};
        if (d == s.first) return S{s.first, s.second + 1.0};
        return S{s.first, s.second + std::exp(d - s.first)};
      };
      return run_reducer<T>(x, reduced, y, init, step, [](S s, int64_t) { return s.first + std::log(s.second); });
    }
    case Reducer::kMax:
      return run_reducer<T>(x, reduced, y, std::numeric_limits<C>::lowest(),
                            [](C s, const T& v) { return load(v) > s || is_nan_value(load(v)) ? load(v) : s; }, same);
    case Reducer::kMin:
      return run_reducer<T>(x, reduced, y, std::numeric_limits<C>::max(),
                            [](C s, const T& v) { return load(v) < s || is_nan_value(load(v)) ? load(v) : s; }, same);
  }
}

Kernel reduce_kernel(Reducer kind) {
  return [kind](KernelContext& ctx) -> Status {
    const Tensor& x = *ctx.input(0);
    Tensor& y = *ctx.output(0);
    KILN_ASSIGN_OR_RETURN(ReductionAxes spec, reduction_axes(ctx.node(), ctx.input(1) != nullptr, ctx.input(1)));
    if (spec.noop) {
      std::copy_n(static_cast<const char*>(x.raw_data()), x.byte_size(), static_cast<char*>(y.raw_data()));
      return Status::ok();
    }
    auto reduced = reduced_dims(*spec.axes, x.rank());
    if (!reduced.is_ok()) return ctx.error(reduced.status().message());
    if (!dispatch<ReduceTypes>(x.dtype(), [&]<class T>() { reduce_typed<T>(kind, x, reduced.value(), y); }))
      return ctx.error(std::string("unsupported element type ") + dtype_name(x.dtype()));
    return Status::ok();
  };
}

// ---- ArgMax / ArgMin ----

Status arg_rule(InferenceContext& ctx) {
  KILN_RETURN_IF_ERROR(check_input_count(ctx, 1, 1));
  KILN_RETURN_IF_ERROR(check_input_dtype<ReduceTypes>(ctx, 0));
  const ir::TensorType& x = ctx.input_type(0);
  ir::TensorType out{DType::kInt64, std::nullopt};
  if (x.shape) {
    auto axis = normalize_axis(ctx.node().attr_int("axis", 0), static_cast<int64_t>(x.shape->rank()));
    if (!axis.is_ok()) return ctx.error(axis.status().message());
    std::vector<ir::Dim> dims = x.shape->dims();
    if (ctx.node().attr_int("keepdims", 1) != 0) dims[static_cast<size_t>(axis.value())] = ir::Dim(1);
    else dims.erase(dims.begin() + axis.value());
    out.shape = ir::Shape(std::move(dims));
  }
  ctx.set_output_type(0, std::move(out));
  return Status::ok();
}

Kernel arg_kernel(bool is_max) {
  return [is_max](KernelContext& ctx) -> Status {
    const Tensor& x = *ctx.input(0);
    auto axis = normalize_axis(ctx.node().attr_int("axis", 0), x.rank());
    if (!axis.is_ok()) return ctx.error(axis.status().message());
    const bool last = ctx.node().attr_int("select_last_index", 0) != 0;
    // The input as [outer, n, inner] with n along the axis.
    const auto& shape = x.shape();
    const auto at = shape.begin() + axis.value();
    const int64_t outer = shape_element_count({shape.begin(), at}), n = *at;
    const int64_t inner = shape_element_count({at + 1, shape.end()});
    int64_t* out = ctx.output(0)->data<int64_t>();
    const bool ok = dispatch<ReduceTypes>(x.dtype(), [&]<class T>() {
      const T* in = x.data<T>();
      for (int64_t o = 0; o < outer; ++o) {
        for (int64_t i = 0; i < inner; ++i) {
          const T* row = in + o * n * inner + i;
          int64_t best = 0;
          for (int64_t j = 1; j < n; ++j) {
            const auto v = load(row[j * inner]), b = load(row[best * inner]);
            const bool better = is_max ? (v > b || (last && v == b)) : (v < b || (last && v == b));
            if (better) best = j;
          }
          out[o * inner + i] = best;
        }
      }
    });
    if (!ok) return ctx.error(std::string("unsupported element type ") + dtype_name(x.dtype()));
    return Status::ok();
  };
}

}  // namespace

void register_reduce_ops(OpRegistry& r) {
  const std::pair<const char*, Reducer> reducers[] = {
      {"ReduceSum", Reducer::kSum},       {"ReduceMean", Reducer::kMean},     {"ReduceProd", Reducer::kProd},
      {"ReduceSumSquare", Reducer::kSumSquare}, {"ReduceL1", Reducer::kL1}, {"ReduceL2", Reducer::kL2},
      {"ReduceLogSum", Reducer::kLogSum}, {"ReduceLogSumExp", Reducer::kLogSumExp},
      {"ReduceMax", Reducer::kMax},       {"ReduceMin", Reducer::kMin}};
  for (const auto& [name, kind] : reducers) {
    const std::string op = name;
    for (int v : {1, 11, 13, 18, 20}) {
      if ((v == 18 && op == "ReduceSum") || (v == 20 && op != "ReduceMax" && op != "ReduceMin")) continue;
      r.add(OpDef{"", name, v, reduce_rule, reduce_kernel(kind)});
    }
  }
  for (int v : {1, 11, 12, 13}) {
    r.add(OpDef{"", "ArgMax", v, arg_rule, arg_kernel(true)});
    r.add(OpDef{"", "ArgMin", v, arg_rule, arg_kernel(false)});
  }
}

}  // namespace kiln::ops
