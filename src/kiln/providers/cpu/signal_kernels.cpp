// cpu kernels for DFT and STFT over float32 as GEMMs: the transform's twiddle factors are a real
// matrix built once when the plan is (ops/dft_twiddles.h, the angles the reference uses), and the
// lines (DFT: each line along the axis, gathered into a row; STFT: each windowed frame) are the
// rows of one oneDNN sgemm against it, its output already in [..., bins, 2] order for STFT. The
// transform size must be known when the plan is built (dft_length and frame_length constant or
// absent), and the matrix at most 2^24 floats (a transform of some 2900 points; longer ones would
// need an FFT, which Kiln does not have: declined to the reference).
#include <cstring>
#include <vector>

#include "kiln/ops/dft_twiddles.h"
#include "kiln/ops/op_helpers.h"
#include "kiln/providers/cpu/cpu_kernels.h"
#include "kiln/providers/cpu/onednn_support.h"

namespace kiln::providers::cpu {
namespace {

constexpr int64_t kMaxMatrixFloats = int64_t{1} << 24;

// The value of scalar input i when it is a constant, nullopt when absent; an error when computed.
Result<std::optional<int64_t>> constant_scalar(const ir::Node& node, size_t i, const std::string& what) {
  if (!node.input(i)) return std::optional<int64_t>();
  const Tensor* t = constant_input(node, i);
  if (!t) return unsupported_target(node.describe() + ": " + what + " computed at run time");
  KILN_ASSIGN_OR_RETURN(const std::vector<int64_t> v, ops::read_int64s(*t, what));
  if (v.size() != 1) return invalid_model(node.describe() + ": " + what + " must hold one value");
  return std::optional<int64_t>(v[0]);
}

// Everything a DFT kernel needs from the plan.
struct DftPlan {
  int64_t outer = 1, length = 0, inner = 1, parts = 1, n = 0, bins = 0;
  bool inverse = false;
};

Result<DftPlan> dft_plan(const ir::Node& node) {
  const std::vector<int64_t> in = input_dims(node, 0), out = output_dims(node, 0);
  const auto rank = static_cast<int64_t>(in.size());
  int64_t written_axis = node.attr_int("axis", 1);
  if (node.opset_version >= 20) {
    KILN_ASSIGN_OR_RETURN(const std::optional<int64_t> given, constant_scalar(node, 2, "axis"));
    written_axis = given.value_or(-2);
  }
  KILN_ASSIGN_OR_RETURN(const int64_t axis, ops::normalize_axis(written_axis, rank));
  if (axis == rank - 1) return invalid_model(node.describe() + ": axis must not be the trailing real/imaginary dim");
  KILN_ASSIGN_OR_RETURN(const std::optional<int64_t> dft_length, constant_scalar(node, 1, "dft_length"));
  DftPlan p;
  p.length = in[static_cast<size_t>(axis)];
  p.n = dft_length.value_or(p.length);
  if (p.n < 1) return invalid_model(node.describe() + ": dft_length must be positive");
  for (int64_t d = 0; d < axis; ++d) p.outer *= in[static_cast<size_t>(d)];
  for (int64_t d = axis + 1; d < rank - 1; ++d) p.inner *= in[static_cast<size_t>(d)];
  p.parts = in.back();
  p.bins = out[static_cast<size_t>(axis)];
  p.inverse = node.attr_int("inverse", 0) != 0;
  return p;
}

Capability signal_supports(const ir::Node& node) {
  Capability c = float_tensors(node, {0});
  if (!c.supported) return c;
  if (!node.inputs[0]->type.has_static_shape() || !node.outputs[0]->type.has_static_shape())
    return Capability::no(node.op_type + " whose shapes the plan does not know");
  if (node.op_type == "STFT") {
    if (node.input(2) && !(c = float_tensors(node, {2})).supported) return c;
    const Result<std::optional<int64_t>> length = constant_scalar(node, 3, "frame_length");
    if (!length.is_ok()) return Capability::no(length.status().message());
    const int64_t n = length->value_or(node.input(2) ? input_dims(node, 2)[0] : 0);
    if (n * input_dims(node, 0)[2] * output_dims(node, 0)[2] * 2 > kMaxMatrixFloats)
      return Capability::no("an STFT of " + std::to_string(n) + " points (its twiddle matrix is too large; no FFT)");
    return Capability::yes();
  }
  const Result<DftPlan> p = dft_plan(node);
  if (!p.is_ok()) return Capability::no(p.status().message());
  if (std::min(p->length, p->n) * p->parts * p->bins * 2 > kMaxMatrixFloats)
    return Capability::no("a DFT of " + std::to_string(p->n) + " points (its twiddle matrix is too large; no FFT)");
  return Capability::yes();
}

// rows [m, k] x matrix [k, n] -> out [m, n], row-major.
Status gemm(const ops::KernelContext& ctx, int64_t m, int64_t n, int64_t k, const float* rows, const float* matrix, float* out) {
  if (m == 0 || n == 0) return Status::ok();
  if (k == 0) {
    std::fill_n(out, m * n, 0.0f);
    return Status::ok();
  }
  if (dnnl_sgemm('N', 'N', m, n, k, 1.0f, rows, k, matrix, n, 0.0f, out, n) != dnnl_success) return ctx.error("oneDNN sgemm failed");
  return Status::ok();
}

Result<ops::Kernel> build_dft(const ir::Node& node) {
  KILN_ASSIGN_OR_RETURN(const DftPlan p, dft_plan(node));
  const int64_t used = std::min(p.length, p.n);  // samples past n are cut; missing ones are zeros
  auto matrix = std::make_shared<const std::vector<float>>(ops::dft_matrix(used, p.parts, p.bins, p.n, p.inverse));
  return ops::Kernel([p, used, matrix](ops::KernelContext& ctx) -> Status {
    const float* x = ctx.input(0)->data<float>();
    float* y = ctx.output(0)->data<float>();
    const int64_t lines = p.outer * p.inner, width = used * p.parts;
    // Lines along the axis as contiguous rows (the input is already in that order when inner is 1
    // and nothing is cut).
    std::vector<float> rows;
    const float* row_data = x;
    if (p.inner != 1 || used != p.length) {
      rows.resize(static_cast<size_t>(lines * width));
#pragma omp parallel for schedule(static) if (lines * width >= (1 << 15))
      for (int64_t line = 0; line < lines; ++line) {
        const int64_t o = line / p.inner, i = line % p.inner;
        for (int64_t k = 0; k < used; ++k)
          std::memcpy(&rows[static_cast<size_t>(line * width + k * p.parts)], x + ((o * p.length + k) * p.inner + i) * p.parts,
                      static_cast<size_t>(p.parts) * sizeof(float));
      }
      row_data = rows.data();
    }
    if (p.inner == 1) return gemm(ctx, lines, p.bins * 2, width, row_data, matrix->data(), y);
    std::vector<float> spectra(static_cast<size_t>(lines * p.bins * 2));
    KILN_RETURN_IF_ERROR(gemm(ctx, lines, p.bins * 2, width, row_data, matrix->data(), spectra.data()));
#pragma omp parallel for schedule(static) if (lines * p.bins >= (1 << 14))
    for (int64_t line = 0; line < lines; ++line) {
      const int64_t o = line / p.inner, i = line % p.inner;
      for (int64_t f = 0; f < p.bins; ++f)
        std::memcpy(y + ((o * p.bins + f) * p.inner + i) * 2, &spectra[static_cast<size_t>((line * p.bins + f) * 2)], 2 * sizeof(float));
    }
    return Status::ok();
  });
}

Result<ops::Kernel> build_stft(const ir::Node& node) {
  const std::vector<int64_t> in = input_dims(node, 0), out = output_dims(node, 0);
  KILN_ASSIGN_OR_RETURN(const std::optional<int64_t> given, constant_scalar(node, 3, "frame_length"));
  const int64_t length = given.value_or(node.input(2) ? input_dims(node, 2)[0] : 0);
  if (length < 1) return invalid_model(node.describe() + ": frame_length must be positive");
  const int64_t signal_length = in[1], parts = in[2], batches = out[0], frames = out[1], bins = out[2];
  auto matrix = std::make_shared<const std::vector<float>>(ops::dft_matrix(length, parts, bins, length, false));
  return ops::Kernel([=](ops::KernelContext& ctx) -> Status {
    KILN_ASSIGN_OR_RETURN(const std::vector<int64_t> step_values, ops::read_int64s(*ctx.input(1), "frame_step"));
    if (step_values.size() != 1 || step_values[0] < 1) return ctx.error("frame_step must be one positive value");
    const int64_t step = step_values[0];
    if (frames > 0 && (frames - 1) * step + length > signal_length)
      return ctx.error("frames of " + std::to_string(length) + " samples every " + std::to_string(step) + " do not fit " +
                       std::to_string(signal_length) + " samples");
    const Tensor* window = ctx.input(2);
    if (window && window->element_count() != length)
      return ctx.error("the window has " + std::to_string(window->element_count()) + " values for frames of " + std::to_string(length));
    const float* x = ctx.input(0)->data<float>();
    const float* w = window ? window->data<float>() : nullptr;
    const int64_t rows = batches * frames, width = length * parts;
    std::vector<float> framed(static_cast<size_t>(rows * width));
#pragma omp parallel for schedule(static) if (rows * width >= (1 << 15))
    for (int64_t r = 0; r < rows; ++r) {
      const float* frame = x + ((r / frames) * signal_length + (r % frames) * step) * parts;
      float* dst = &framed[static_cast<size_t>(r * width)];
      for (int64_t k = 0; k < length; ++k)
        for (int64_t q = 0; q < parts; ++q) dst[k * parts + q] = frame[k * parts + q] * (w ? w[k] : 1.0f);
    }
    return gemm(ctx, rows, bins * 2, width, framed.data(), matrix->data(), ctx.output(0)->data<float>());
  });
}

}  // namespace

void add_signal_kernels(CpuKernelTable& table) {
  table["DFT"] = node_only(signal_supports, build_dft);
  table["STFT"] = node_only(signal_supports, build_stft);
}

}  // namespace kiln::providers::cpu
