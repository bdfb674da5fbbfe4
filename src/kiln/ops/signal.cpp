// Op family signal (opset 17; DFT-20 takes its axis as an input): DFT and STFT as plain O(n^2)
// transforms in double, the cosine-sum windows (Hann, Hamming, Blackman) and MelWeightMatrix.
// Complex values are a trailing dim of 2.
#include <cmath>
#include <complex>
#include <numbers>

#include "kiln/ops/data_movement.h"
#include "kiln/ops/dft_twiddles.h"
#include "kiln/ops/family_support.h"
#include "kiln/ops/op_families.h"
#include "kiln/ops/op_helpers.h"
#include "kiln/ops/op_registry.h"

namespace kiln::ops {
namespace {

using Complex = std::complex<double>;
using IndexTypes = TypeList<int32_t, int64_t>;

// ---- shared helpers ----

// The value of scalar integer input i when known (nullopt when not known yet).
Result<std::optional<int64_t>> known_scalar(const InferenceContext& ctx, size_t i, const std::string& what) {
  KILN_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> v, known_int64s(ctx, i, what));
  if (!v) return std::optional<int64_t>();
  if (v->size() != 1) return ctx.error(what + " must hold exactly one value");
  return std::optional<int64_t>(v->front());
}

// Scalar integer input i at run time (the rule has already checked it).
int64_t scalar_int(const KernelContext& ctx, size_t i) {
  Result<std::vector<int64_t>> v = read_int64s(*ctx.input(i), "scalar");
  return v.is_ok() && !v->empty() ? v->front() : 0;
}

// Writes `v` into element `index` of a numeric tensor (integers truncate and saturate).
void store_real(Tensor& t, int64_t index, double v) {
  dispatch<NumericTypes>(t.dtype(), [&]<class T>() {
    if constexpr (std::is_integral_v<T>) t.data<T>()[index] = saturating_cast<T>(v);
    else t.data<T>()[index] = store<T>(v);
  });
}

// The complex value at element `at` of a tensor with `parts` (1: real, 2: real and imaginary) per value.
Complex complex_at(const Tensor& t, int64_t at, int64_t parts) {
  return Complex(element_as_double(t, at), parts == 2 ? element_as_double(t, at + 1) : 0.0);
}

void store_complex(Tensor& t, int64_t at, Complex v) {
  store_real(t, at, v.real());
  store_real(t, at + 1, v.imag());
}

// The output_datatype attribute (float by default), which must name a numeric type.
Result<DType> output_datatype(const InferenceContext& ctx) {
  const int64_t code = ctx.node().attr_int("output_datatype", static_cast<int64_t>(DType::kFloat));
  if (code < 0 || code > 16 || !dtype_is_known(static_cast<int32_t>(code)) ||
      !list_has(NumericTypes{}, static_cast<DType>(code)))
    return ctx.error("output_datatype " + std::to_string(code) + " is not a numeric type");
  return static_cast<DType>(code);
}

// X[f] = sum_k x[k] exp(-+2 pi i f k / n) for f in [0, bins), x zero-padded or cut to n samples;
// the inverse transform uses the + sign and divides by n. Phases are reduced exactly mod n.
std::vector<Complex> dft(const std::vector<Complex>& x, int64_t n, int64_t bins, bool inverse) {
  std::vector<Complex> out(static_cast<size_t>(bins));
  const int64_t used = std::min<int64_t>(static_cast<int64_t>(x.size()), n);
  for (int64_t f = 0; f < bins; ++f) {
    Complex sum = 0.0;
    for (int64_t k = 0; k < used; ++k) {
      const double angle = dft_angle(f, k, n, inverse);
      sum += x[static_cast<size_t>(k)] * Complex(std::cos(angle), std::sin(angle));
    }
    out[static_cast<size_t>(f)] = inverse ? sum / static_cast<double>(n) : sum;
  }
  return out;
}

// Input i's trailing dim: 1 (real) or 2 (complex) when static.
Status check_complex_dim(const InferenceContext& ctx, const ir::Shape& shape, const std::string& what) {
  const ir::Dim& last = shape.dims().back();
  if (last.is_static() && last.value() != 1 && last.value() != 2)
    return ctx.error(what + " must end in a dim of 1 (real) or 2 (complex), got " + std::to_string(last.value()));
  return Status::ok();
}

// ---- DFT ----

struct DftAttrs {
  int64_t axis = 1;
  bool inverse = false;
  bool onesided = false;
};

// The signal axis as written: DFT-17's 'axis' attribute (default 1); from opset 20 the scalar
// input 2 (default -2), nullopt while that input's value is not known.
Result<std::optional<int64_t>> written_dft_axis(const InferenceContext& ctx) {
  if (ctx.node().opset_version < 20) return std::optional<int64_t>(ctx.node().attr_int("axis", 1));
  if (!ctx.has_input(2)) return std::optional<int64_t>(-2);
  return known_scalar(ctx, 2, "axis");
}

// The signal axis in [0, rank - 1): a signal dim, never the trailing real/imaginary one.
Result<int64_t> signal_axis(int64_t written, int64_t rank) {
  KILN_ASSIGN_OR_RETURN(const int64_t axis, normalize_axis(written, rank));
  if (axis == rank - 1) return invalid_model("axis must not be the trailing real/imaginary dim");
  return axis;
}

// Attributes checked against the input rank (the axis once it is known).
Result<DftAttrs> dft_attrs(const InferenceContext& ctx, int64_t rank, int64_t written_axis) {
  DftAttrs a;
  Result<int64_t> axis = signal_axis(written_axis, rank);
  if (!axis.is_ok()) return ctx.error(axis.status().message());
  a.axis = *axis;
  a.inverse = ctx.node().attr_int("inverse", 0) != 0;
  a.onesided = ctx.node().attr_int("onesided", 0) != 0;
  return a;
}

// Inputs: the signal, dft_length (optional) and, from opset 20, axis (optional scalar).
Status dft_infer(InferenceContext& ctx) {
  const bool axis_is_input = ctx.node().opset_version >= 20;
  KILN_RETURN_IF_ERROR(check_input_count(ctx, 1, axis_is_input ? 3 : 2));
  KILN_RETURN_IF_ERROR(check_input_dtype<FloatTypes>(ctx, 0));
  if (ctx.has_input(1)) KILN_RETURN_IF_ERROR(check_input_dtype<IndexTypes>(ctx, 1));
  if (ctx.has_input(2)) KILN_RETURN_IF_ERROR(check_input_dtype<TypeList<int64_t>>(ctx, 2));
  std::optional<int64_t> length;
  if (ctx.has_input(1)) {
    KILN_ASSIGN_OR_RETURN(length, known_scalar(ctx, 1, "dft_length"));
    if (length && *length < 1) return ctx.error("dft_length must be positive, got " + std::to_string(*length));
  }
  const ir::TensorType& in = ctx.input_type(0);
  if (!in.shape) {
    ctx.set_output_type(0, typed_like(in, std::nullopt));
    return Status::ok();
  }
  const int64_t rank = static_cast<int64_t>(in.shape->rank());
  if (rank < 2) return ctx.error("input must have rank >= 2 (signal dims and a trailing real/imaginary dim)");
  KILN_RETURN_IF_ERROR(check_complex_dim(ctx, *in.shape, "input"));
  const bool onesided = ctx.node().attr_int("onesided", 0) != 0;
  if (onesided && in.shape->dims().back() == ir::Dim(2)) return ctx.error("onesided needs a real input");
  ir::Shape out = *in.shape;
  out.dims().back() = ir::Dim(2);
  KILN_ASSIGN_OR_RETURN(const std::optional<int64_t> written_axis, written_dft_axis(ctx));
  if (!written_axis) {  // any signal dim may change: only the rank is known
    for (size_t d = 0; d + 1 < out.rank(); ++d) out.dims()[d] = ir::Dim();
    ctx.set_output_type(0, typed_like(in, out));
    return Status::ok();
  }
  KILN_ASSIGN_OR_RETURN(DftAttrs a, dft_attrs(ctx, rank, *written_axis));
  ir::Dim bins = (*in.shape)[static_cast<size_t>(a.axis)];
  if (ctx.has_input(1)) bins = length ? ir::Dim(*length) : ir::Dim();
  if (a.onesided) bins = bins.is_static() ? ir::Dim(bins.value() / 2 + 1) : ir::Dim();
  out.dims()[static_cast<size_t>(a.axis)] = bins;
  ctx.set_output_type(0, typed_like(in, out));
  return Status::ok();
}

Status dft_kernel(KernelContext& ctx) {
  const Tensor& in = *ctx.input(0);
  Tensor& out = *ctx.output(0);
  const std::vector<int64_t>& dims = in.shape();
  const int64_t rank = in.rank();
  const int64_t written_axis = ctx.node().opset_version < 20 ? ctx.node().attr_int("axis", 1)
                               : ctx.input(2)                   ? scalar_int(ctx, 2)
                                                                : -2;
  Result<int64_t> signal = signal_axis(written_axis, rank);
  if (!signal.is_ok()) return ctx.error(signal.status().message());
  const int64_t axis = *signal;
  const int64_t n_in = dims[static_cast<size_t>(axis)];
  const int64_t n = ctx.input(1) ? scalar_int(ctx, 1) : n_in;
  if (n < 1) return ctx.error("dft_length must be positive, got " + std::to_string(n));
  const int64_t bins = out.shape()[static_cast<size_t>(axis)];
  const int64_t parts = dims.back();
  const int64_t outer = dims_product(dims, 0, static_cast<size_t>(axis));
  const int64_t inner = dims_product(dims, static_cast<size_t>(axis) + 1, static_cast<size_t>(rank) - 1);
  const bool inverse = ctx.node().attr_int("inverse", 0) != 0;
  std::vector<Complex> line(static_cast<size_t>(n_in));
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      for (int64_t k = 0; k < n_in; ++k) {
        const int64_t at = ((o * n_in + k) * inner + i) * parts;
        line[static_cast<size_t>(k)] = complex_at(in, at, parts);
      }
      const std::vector<Complex> spectrum = dft(line, n, bins, inverse);
      for (int64_t f = 0; f < bins; ++f) {
        const int64_t at = ((o * bins + f) * inner + i) * 2;
        store_complex(out, at, spectrum[static_cast<size_t>(f)]);
      }
    }
  }
  return Status::ok();
}

// ---- STFT ----

// The DFT size: frame_length when given, else the window's length; they must agree when both are.
Result<std::optional<int64_t>> stft_frame_length(const InferenceContext& ctx) {
  std::optional<int64_t> from_window;
  if (ctx.has_input(2)) {
    const ir::TensorType& w = ctx.input_type(2);
    if (w.shape && w.shape->rank() != 1) return ctx.error("window must have rank 1");
    if (w.shape && w.shape->dims()[0].is_static()) from_window = w.shape->dims()[0].value();
  }
  if (!ctx.has_input(3)) {
    if (!ctx.has_input(2)) return ctx.error("needs a window or a frame_length");
    return from_window;
  }
  KILN_ASSIGN_OR_RETURN(std::optional<int64_t> given, known_scalar(ctx, 3, "frame_length"));
  if (given && from_window && *given != *from_window)
    return ctx.error("frame_length " + std::to_string(*given) + " differs from the window length " +
                     std::to_string(*from_window));
  return given ? given : from_window;
}

Status stft_infer(InferenceContext& ctx) {
  KILN_RETURN_IF_ERROR(check_input_count(ctx, 2, 4));
  KILN_RETURN_IF_ERROR(check_input_dtype<FloatTypes>(ctx, 0));
  KILN_RETURN_IF_ERROR(check_input_dtype<IndexTypes>(ctx, 1));
  if (ctx.has_input(2)) KILN_RETURN_IF_ERROR(check_same_dtype(ctx, 0, 2));
  if (ctx.has_input(3)) KILN_RETURN_IF_ERROR(check_input_dtype<IndexTypes>(ctx, 3));
  const ir::TensorType& in = ctx.input_type(0);
  if (in.shape && in.shape->rank() != 3) return ctx.error("signal must have shape [batch, length, 1 or 2]");
  if (in.shape) KILN_RETURN_IF_ERROR(check_complex_dim(ctx, *in.shape, "signal"));
  const bool onesided = ctx.node().attr_int("onesided", 1) != 0;
  if (onesided && in.shape && in.shape->dims()[2] == ir::Dim(2))
    return ctx.error("onesided needs a real signal (set onesided=0 for complex input)");
  KILN_ASSIGN_OR_RETURN(std::optional<int64_t> length, stft_frame_length(ctx));
  KILN_ASSIGN_OR_RETURN(std::optional<int64_t> step, known_scalar(ctx, 1, "frame_step"));
  if (length && *length < 1) return ctx.error("frame_length must be positive");
  if (step && *step < 1) return ctx.error("frame_step must be positive");
  ir::Dim batch, frames, bins;
  if (in.shape) {
    batch = (*in.shape)[0];
    const ir::Dim& signal_length = (*in.shape)[1];
    if (length && step && signal_length.is_static()) {
      if (*length > signal_length.value())
        return ctx.error("frame_length " + std::to_string(*length) + " exceeds the signal length " +
                         std::to_string(signal_length.value()));
      frames = ir::Dim((signal_length.value() - *length) / *step + 1);
    }
  }
  if (length) bins = ir::Dim(onesided ? *length / 2 + 1 : *length);
  ctx.set_output_type(0, typed_like(in, ir::Shape({batch, frames, bins, ir::Dim(2)})));
  return Status::ok();
}

Status stft_kernel(KernelContext& ctx) {
  const Tensor& signal = *ctx.input(0);
  const Tensor* window = ctx.input(2);
  Tensor& out = *ctx.output(0);
  const int64_t signal_length = signal.shape()[1], parts = signal.shape()[2];
  const int64_t step = scalar_int(ctx, 1);
  const int64_t length = ctx.input(3) ? scalar_int(ctx, 3) : window->shape()[0];
  const int64_t batches = out.shape()[0], frames = out.shape()[1], bins = out.shape()[2];
  std::vector<Complex> frame(static_cast<size_t>(length));
  for (int64_t b = 0; b < batches; ++b) {
    for (int64_t t = 0; t < frames; ++t) {
      for (int64_t k = 0; k < length; ++k) {
        const int64_t at = (b * signal_length + t * step + k) * parts;
        const double w = window ? element_as_double(*window, k) : 1.0;
        frame[static_cast<size_t>(k)] = w * complex_at(signal, at, parts);
      }
      const std::vector<Complex> spectrum = dft(frame, length, bins, false);
      for (int64_t f = 0; f < bins; ++f) {
        const int64_t at = ((b * frames + t) * bins + f) * 2;
        store_complex(out, at, spectrum[static_cast<size_t>(f)]);
      }
    }
  }
  return Status::ok();
}

// ---- HannWindow, HammingWindow, BlackmanWindow ----

// w[n] = a0 - a1 cos(2 pi n / N) + a2 cos(4 pi n / N), N = size (periodic) or size - 1 (symmetric).
struct CosineSum {
  double a0, a1, a2;
};

Status window_infer(InferenceContext& ctx) {
  KILN_RETURN_IF_ERROR(check_input_count(ctx, 1, 1));
  KILN_RETURN_IF_ERROR(check_input_dtype<IndexTypes>(ctx, 0));
  KILN_ASSIGN_OR_RETURN(DType dtype, output_datatype(ctx));
  KILN_ASSIGN_OR_RETURN(std::optional<int64_t> size, known_scalar(ctx, 0, "size"));
  if (size && *size < 0) return ctx.error("size must not be negative, got " + std::to_string(*size));
  ctx.set_output_type(0, ir::TensorType{dtype, ir::Shape({size ? ir::Dim(*size) : ir::Dim()})});
  return Status::ok();
}

// A symmetric window of one sample has N = 0; it is cos(0) throughout, so a0 - a1 + a2.
Kernel window_kernel(CosineSum c) {
  return [c](KernelContext& ctx) -> Status {
    Tensor& out = *ctx.output(0);
    const int64_t size = out.shape()[0];
    const bool periodic = ctx.node().attr_int("periodic", 1) != 0;
    const int64_t period = periodic ? size : size - 1;
    const double step = period > 0 ? 2.0 * std::numbers::pi / static_cast<double>(period) : 0.0;
    for (int64_t n = 0; n < size; ++n) {
      const double angle = step * static_cast<double>(n);
      store_real(out, n, c.a0 - c.a1 * std::cos(angle) + c.a2 * std::cos(2.0 * angle));
    }
    return Status::ok();
  };
}

// ---- MelWeightMatrix ----

struct MelParams {
  int64_t mel_bins = 0, dft_length = 0, sample_rate = 0;
  double lower_hz = 0.0, upper_hz = 0.0;
};

Status mel_check(const InferenceContext& ctx, const MelParams& p) {
  if (p.mel_bins < 1 || p.dft_length < 1 || p.sample_rate < 1)
    return ctx.error("num_mel_bins, dft_length and sample_rate must be positive");
  if (p.lower_hz < 0.0 || !(p.lower_hz < p.upper_hz))
    return ctx.error("needs 0 <= lower_edge_hertz < upper_edge_hertz");
  return Status::ok();
}

Status mel_infer(InferenceContext& ctx) {
  KILN_RETURN_IF_ERROR(check_input_count(ctx, 5, 5));
  for (size_t i = 0; i < 3; ++i) KILN_RETURN_IF_ERROR(check_input_dtype<IndexTypes>(ctx, i));
  for (size_t i = 3; i < 5; ++i) KILN_RETURN_IF_ERROR(check_input_dtype<FloatTypes>(ctx, i));
  KILN_ASSIGN_OR_RETURN(DType dtype, output_datatype(ctx));
  KILN_ASSIGN_OR_RETURN(std::optional<int64_t> mel_bins, known_scalar(ctx, 0, "num_mel_bins"));
  KILN_ASSIGN_OR_RETURN(std::optional<int64_t> dft_length, known_scalar(ctx, 1, "dft_length"));
  KILN_ASSIGN_OR_RETURN(std::optional<int64_t> sample_rate, known_scalar(ctx, 2, "sample_rate"));
  const Tensor* lower = ctx.input_value(3);
  const Tensor* upper = ctx.input_value(4);
  if (mel_bins && dft_length && sample_rate && lower && upper) {
    if (lower->element_count() != 1 || upper->element_count() != 1)
      return ctx.error("lower_edge_hertz and upper_edge_hertz must hold one value");
    KILN_RETURN_IF_ERROR(mel_check(ctx, {*mel_bins, *dft_length, *sample_rate, element_as_double(*lower, 0),
                                         element_as_double(*upper, 0)}));
  }
  const ir::Dim rows = dft_length ? ir::Dim(*dft_length / 2 + 1) : ir::Dim();
  const ir::Dim cols = mel_bins ? ir::Dim(*mel_bins) : ir::Dim();
  ctx.set_output_type(0, ir::TensorType{dtype, ir::Shape({rows, cols})});
  return Status::ok();
}

double hz_to_mel(double hz) { return 2595.0 * std::log10(1.0 + hz / 700.0); }
double mel_to_hz(double mel) { return 700.0 * (std::pow(10.0, mel / 2595.0) - 1.0); }

// Triangular filters with peak 1 between num_mel_bins + 2 points evenly spaced on the mel scale,
// mapped to DFT bins as floor((dft_length + 1) * hz / sample_rate) (the ONNX definition). Filter
// points past the last spectrogram bin are dropped.
Status mel_kernel(KernelContext& ctx) {
  Tensor& out = *ctx.output(0);
  const MelParams p{scalar_int(ctx, 0), scalar_int(ctx, 1), scalar_int(ctx, 2), element_as_double(*ctx.input(3), 0),
                    element_as_double(*ctx.input(4), 0)};
  const int64_t rows = out.shape()[0];
  const double low_mel = hz_to_mel(p.lower_hz);
  const double mel_step = (hz_to_mel(p.upper_hz) - low_mel) / static_cast<double>(p.mel_bins + 2);
  std::vector<int64_t> points(static_cast<size_t>(p.mel_bins + 2));
  for (size_t k = 0; k < points.size(); ++k) {
    const double hz = mel_to_hz(static_cast<double>(k) * mel_step + low_mel);
    points[k] = static_cast<int64_t>(std::floor(static_cast<double>(p.dft_length + 1) * hz / static_cast<double>(p.sample_rate)));
  }
  std::vector<double> m(static_cast<size_t>(rows * p.mel_bins), 0.0);
  auto set = [&](int64_t row, int64_t col, double v) {
    if (row >= 0 && row < rows) m[static_cast<size_t>(row * p.mel_bins + col)] = v;
  };
  for (int64_t i = 0; i < p.mel_bins; ++i) {
    const int64_t left = points[static_cast<size_t>(i)], center = points[static_cast<size_t>(i) + 1],
                  right = points[static_cast<size_t>(i) + 2];
    if (center == left) set(center, i, 1.0);
    for (int64_t j = left; center > left && j <= center; ++j)
      set(j, i, static_cast<double>(j - left) / static_cast<double>(center - left));
    for (int64_t j = center; j < right; ++j)
      set(j, i, static_cast<double>(right - j) / static_cast<double>(right - center));
  }
  for (size_t k = 0; k < m.size(); ++k) store_real(out, static_cast<int64_t>(k), m[k]);
  return Status::ok();
}

}  // namespace

void register_signal_ops(OpRegistry& r) {
  r.add({"", "DFT", 17, dft_infer, dft_kernel});
  r.add({"", "DFT", 20, dft_infer, dft_kernel});
  r.add({"", "STFT", 17, stft_infer, stft_kernel});
  r.add({"", "HannWindow", 17, window_infer, window_kernel({0.5, 0.5, 0.0})});
  r.add({"", "HammingWindow", 17, window_infer, window_kernel({25.0 / 46.0, 21.0 / 46.0, 0.0})});
  r.add({"", "BlackmanWindow", 17, window_infer, window_kernel({0.42, 0.5, 0.08})});
  r.add({"", "MelWeightMatrix", 17, mel_infer, mel_kernel});
}

}  // namespace kiln::ops
