// Spectral ops of opset 17: DFT (forward/inverse, onesided, dft_length, any axis; complex values
// as a trailing dimension of 2) and STFT (framed, windowed DFTs of a signal). Plain O(n^2)
// transforms in double: exact and readable.
#include <cmath>
#include <complex>
#include <numbers>

#include "kiln/ops/data_movement.h"
#include "kiln/ops/op_families.h"
#include "kiln/ops/op_helpers.h"
#include "kiln/ops/op_registry.h"

namespace kiln::ops {

namespace {

using Complex = std::complex<double>;

// X[k] = sum_n x[n] e^(-+2 pi i k n / N) for k < bins; the inverse divides by N.
std::vector<Complex> dft(const std::vector<Complex>& x, int64_t n, int64_t bins, bool inverse) {
  std::vector<Complex> out(static_cast<size_t>(bins));
  const double sign = inverse ? 1.0 : -1.0;
  for (int64_t k = 0; k < bins; ++k) {
    Complex sum = 0;
    for (int64_t j = 0; j < n && j < static_cast<int64_t>(x.size()); ++j)
      sum += x[static_cast<size_t>(j)] * std::polar(1.0, sign * 2 * std::numbers::pi * static_cast<double>(k * j) / static_cast<double>(n));
    out[static_cast<size_t>(k)] = inverse ? sum / static_cast<double>(n) : sum;
  }
  return out;
}

// ---- DFT ----

Result<int64_t> dft_length(const InferenceContext& ctx, const ir::Dim& axis_dim) {
  KILN_ASSIGN_OR_RETURN(auto given, known_int64s(ctx, 1, "dft_length"));
  if (given && !given->empty()) return (*given)[0];
  return axis_dim.is_static() ? axis_dim.value() : -1;
}

Status dft_infer(InferenceContext& ctx) {
  const ir::TensorType& x = ctx.input_type(0);
  ir::TensorType out{x.dtype};
  if (x.shape) {
    const auto rank = static_cast<int64_t>(x.shape->rank());
    if (rank < 2) return ctx.error("input must be [..., 1] (real) or [..., 2] (complex)");
    KILN_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(ctx.node().attr_int("axis", 1), rank - 1));
    std::vector<ir::Dim> dims = x.shape->dims();
    KILN_ASSIGN_OR_RETURN(int64_t n, dft_length(ctx, dims[axis]));
    const bool onesided = ctx.node().attr_int("onesided", 0) != 0;
    dims[axis] = n < 0 ? ir::Dim::unknown() : ir::Dim(onesided ? n / 2 + 1 : n);
    dims.back() = ir::Dim(2);
    out.shape = ir::Shape(dims);
  }
  ctx.set_output_type(0, out);
  return Status::ok();
}

Status dft_kernel(KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  Tensor& y = *ctx.output(0);
  KILN_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(ctx.node().attr_int("axis", 1), x.rank() - 1));
  const bool complex_in = x.shape().back() == 2, inverse = ctx.node().attr_int("inverse", 0) != 0;
  const int64_t len = x.shape()[axis], bins = y.shape()[axis];
  int64_t n = len;
  if (ctx.input(1) && ctx.input(1)->element_count() > 0) n = static_cast<int64_t>(element_as_double(*ctx.input(1), 0));
  const int64_t outer = dims_product(x.shape(), 0, axis);
  const int64_t inner = dims_product(x.shape(), axis + 1, x.shape().size() - 1);
  const int64_t in_width = complex_in ? 2 : 1;
  std::vector<double> out(static_cast<size_t>(y.element_count()));
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      std::vector<Complex> line;
      for (int64_t j = 0; j < std::min(len, n); ++j) {
        const int64_t at = ((o * len + j) * inner + i) * in_width;
        line.emplace_back(element_as_double(x, at), complex_in ? element_as_double(x, at + 1) : 0.0);
      }
      const std::vector<Complex> spectrum = dft(line, n, bins, inverse);
      for (int64_t k = 0; k < bins; ++k) {
        const auto at = static_cast<size_t>(((o * bins + k) * inner + i) * 2);
        out[at] = spectrum[static_cast<size_t>(k)].real();
        out[at + 1] = spectrum[static_cast<size_t>(k)].imag();
      }
    }
  visit_dtype(y.dtype(), [&]<class T>() {
    if constexpr (!std::is_same_v<T, std::string> && !std::is_same_v<T, bool>)
      for (size_t k = 0; k < out.size(); ++k) y.data<T>()[k] = from_double<T>(out[k]);
  });
  return Status::ok();
}

// ---- STFT ----

struct Framing {
  int64_t step = 0, length = 0, frames = 0, bins = 0;
};

// Frame step and length (the window's length, else frame_length), frame count and bins.
Result<Framing> framing(const ir::Node& node, int64_t signal_length, const Tensor* step, const Tensor* window,
                        const Tensor* frame_length) {
  Framing f;
  if (!step) return invalid_model(node.describe() + ": frame_step is required");
  f.step = static_cast<int64_t>(element_as_double(*step, 0));
  f.length = window ? window->element_count() : frame_length ? static_cast<int64_t>(element_as_double(*frame_length, 0)) : 0;
  if (f.step <= 0 || f.length <= 0 || f.length > signal_length)
    return invalid_argument(node.describe() + ": frame_step and frame length must be positive and fit the signal");
  f.frames = (signal_length - f.length) / f.step + 1;
  f.bins = node.attr_int("onesided", 1) != 0 ? f.length / 2 + 1 : f.length;
  return f;
}

Status stft_infer(InferenceContext& ctx) {
  const ir::TensorType& s = ctx.input_type(0);
  ir::TensorType out{s.dtype};
  if (s.has_static_shape() && ctx.input_value(1) && (ctx.input_value(2) || ctx.input_value(3) || ctx.has_input(2))) {
    const Tensor* window = ctx.input_value(2);
    if (ctx.has_input(2) && !window) {
      out.shape = ir::Shape({(*s.shape)[0], ir::Dim::unknown(), ir::Dim::unknown(), ir::Dim(2)});
    } else {
      KILN_ASSIGN_OR_RETURN(Framing f, framing(ctx.node(), s.shape->static_dims()[1], ctx.input_value(1), window, ctx.input_value(3)));
      out.shape = ir::Shape({(*s.shape)[0], ir::Dim(f.frames), ir::Dim(f.bins), ir::Dim(2)});
    }
  } else if (s.shape) {
    out.shape = ir::Shape({(*s.shape)[0], ir::Dim::unknown(), ir::Dim::unknown(), ir::Dim(2)});
  }
  ctx.set_output_type(0, out);
  return Status::ok();
}

Status stft_kernel(KernelContext& ctx) {
  const Tensor& s = *ctx.input(0);
  const Tensor* window = ctx.input(2);
  KILN_ASSIGN_OR_RETURN(Framing f, framing(ctx.node(), s.shape()[1], ctx.input(1), window, ctx.input(3)));
  const bool complex_in = s.shape().back() == 2;
  const int64_t batch = s.shape()[0], length = s.shape()[1], width = complex_in ? 2 : 1;
  Tensor& y = *ctx.output(0);
  std::vector<double> out(static_cast<size_t>(y.element_count()));
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t fr = 0; fr < f.frames; ++fr) {
      std::vector<Complex> frame;
      for (int64_t j = 0; j < f.length; ++j) {
        const int64_t at = (b * length + fr * f.step + j) * width;
        const double w = window ? element_as_double(*window, j) : 1.0;
        frame.emplace_back(w * element_as_double(s, at), complex_in ? w * element_as_double(s, at + 1) : 0.0);
      }
      const std::vector<Complex> spectrum = dft(frame, f.length, f.bins, false);
      for (int64_t k = 0; k < f.bins; ++k) {
        const auto at = static_cast<size_t>(((b * f.frames + fr) * f.bins + k) * 2);
        out[at] = spectrum[static_cast<size_t>(k)].real();
        out[at + 1] = spectrum[static_cast<size_t>(k)].imag();
      }
    }
  visit_dtype(y.dtype(), [&]<class T>() {
    if constexpr (!std::is_same_v<T, std::string> && !std::is_same_v<T, bool>)
      for (size_t k = 0; k < out.size(); ++k) y.data<T>()[k] = from_double<T>(out[k]);
  });
  return Status::ok();
}

}  // namespace

void register_spectral_ops(OpRegistry& r) {
  r.add({"", "DFT", 17, with_required_inputs(1, dft_infer), dft_kernel});
  r.add({"", "STFT", 17, with_required_inputs(2, stft_infer), stft_kernel});
}

}  // namespace kiln::ops
