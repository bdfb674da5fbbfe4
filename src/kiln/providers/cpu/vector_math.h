// Element-wise math over float arrays in branch-free loops the compiler vectorises at the build's
// baseline (no libm calls, which keep a loop scalar; the array forms are in vector_math.cpp): for
// the element-wise ops oneDNN has no eltwise form of, and for the kernels that apply exp, sigmoid
// and tanh to short rows many times a run (the recurrent cells' gates), where a library
// primitive's fixed cost would dominate. exp: Cody-Waite range reduction by ln 2 and a degree-6
// polynomial, within 2 ulp of std::exp over [-87.3, 88.3] (arguments are clamped there); tanh:
// (1 - e^-2|x|) / (1 + e^-2|x|) with its odd series below |x| = 0.1, where the difference would
// lose digits; erf: its Maclaurin series below |x| = 0.5, Abramowitz and Stegun's 7.1.26 (absolute
// error 1.5e-7) above; sin, cos and tan: reduction by pi/2 in three parts (exact enough up to |x|
// of about 8192, the array forms hand larger arguments to libm) and minimax polynomials on
// [-pi/4, pi/4]; the inverse trigonometric, hyperbolic and inverse hyperbolic functions: Cephes'
// single-precision reductions and polynomials (log: frexp's split and a degree-9 polynomial;
// log1p(y) as log(1 + y) scaled by y / ((1 + y) - 1), exact for small y), all within a few ulp.
#pragma once

#include <bit>
#include <cstdint>

#include "kiln/ops/activation_calibration.h"

namespace kiln::providers::cpu {

inline float exp_vectorisable(float x) {
  x = x < -87.3f ? -87.3f : x > 88.3f ? 88.3f : x;
  constexpr float kRound = 12582912.0f;  // 1.5 * 2^23: adding and subtracting it rounds to an integer
  const float n = (x * 1.44269504088896341f + kRound) - kRound;
  const float r = x - n * 0.693359375f - n * -2.12194440e-4f;  // ln 2 in two parts
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  const float e = p * r * r + r + 1.0f;
  const float scale = std::bit_cast<float>(static_cast<int32_t>((static_cast<int32_t>(n) + 127) << 23));
  return e * scale;
}

inline float sigmoid_vectorisable(float x) { return 1.0f / (1.0f + exp_vectorisable(-x)); }

inline float tanh_vectorisable(float x) {
  const float a = x < 0 ? -x : x;
  const float t = exp_vectorisable(-2.0f * a);
  const float far = (1.0f - t) / (1.0f + t);
  const float a2 = a * a;
  const float near = a * (1.0f + a2 * (-1.0f / 3 + a2 * (2.0f / 15 + a2 * (-17.0f / 315))));
  const float v = a < 0.1f ? near : far;
  return x < 0 ? -v : v;
}

inline float erf_vectorisable(float x) {
  const float a = x < 0 ? -x : x, a2 = a * a;
  const float series =
      1.12837916709551257f * a *
      (1.0f + a2 * (-1.0f / 3 + a2 * (1.0f / 10 + a2 * (-1.0f / 42 + a2 * (1.0f / 216 + a2 * (-1.0f / 1320 + a2 / 9360))))));
  const float t = 1.0f / (1.0f + 0.3275911f * a);
  const float poly = t * (0.254829592f + t * (-0.284496736f + t * (1.421413741f + t * (-1.453152027f + t * 1.061405429f))));
  const float tail = 1.0f - poly * exp_vectorisable(-a2);
  const float v = a < 0.5f ? series : tail;
  return x < 0 ? -v : v;
}

// sin and cos of x reduced by pi/2 (r in [-pi/4, pi/4]), and x's quadrant (x = r + quadrant pi/2
// mod 2 pi), for |x| below kTrigReductionLimit.
constexpr float kTrigReductionLimit = 8192.0f;
struct ReducedTrig {
  float sin_r, cos_r;
  int32_t quadrant;
};
inline ReducedTrig reduce_trig(float x) {
  constexpr float kRound = 12582912.0f;
  const float shifted = x * 0.636619772367581343f + kRound;  // x / (pi / 2), rounded to the nearest integer
  const float q = shifted - kRound;
  const int32_t quadrant = (std::bit_cast<int32_t>(shifted) - std::bit_cast<int32_t>(kRound)) & 3;
  const float r = ((x - q * 1.5703125f) - q * 4.837512969970703125e-4f) - q * 7.54978995489188216e-8f;
  const float r2 = r * r;
  const float s = r + r * r2 * (-1.6666654611e-1f + r2 * (8.3321608736e-3f + r2 * -1.9515295891e-4f));
  const float c = 1.0f - 0.5f * r2 + r2 * r2 * (4.166664568298827e-2f + r2 * (-1.388731625493765e-3f + r2 * 2.443315711809948e-5f));
  return {s, c, quadrant};
}

// sin(x) (cosine = false) or cos(x) for |x| below kTrigReductionLimit.
inline float sin_or_cos_vectorisable(float x, bool cosine) {
  const ReducedTrig t = reduce_trig(x);
  // sin(x) over the quadrants: s, c, -s, -c; cos(x) = sin(x + pi/2), one quadrant on.
  const int32_t quadrant = (t.quadrant + (cosine ? 1 : 0)) & 3;
  const float v = (quadrant & 1) ? t.cos_r : t.sin_r;
  return (quadrant & 2) ? -v : v;
}

// The array forms (vector_math.cpp, compiled so that their loops vectorise).
void sigmoid_in_place(float* x, int64_t n);
void tanh_in_place(float* x, int64_t n);
void erf_of(const float* x, float* y, int64_t n);
void sin_of(const float* x, float* y, int64_t n);
void cos_of(const float* x, float* y, int64_t n);
void cube_of(const float* x, float* y, int64_t n);  // x^3
void tan_of(const float* x, float* y, int64_t n);
void asin_of(const float* x, float* y, int64_t n);
void acos_of(const float* x, float* y, int64_t n);
void atan_of(const float* x, float* y, int64_t n);
void sinh_of(const float* x, float* y, int64_t n);
void cosh_of(const float* x, float* y, int64_t n);
void asinh_of(const float* x, float* y, int64_t n);
void acosh_of(const float* x, float* y, int64_t n);
void atanh_of(const float* x, float* y, int64_t n);
void sign_of(const float* x, float* y, int64_t n);
void floor_of(const float* x, float* y, int64_t n);
void ceil_of(const float* x, float* y, int64_t n);
void softsign_of(const float* x, float* y, int64_t n);
// ONNX's Shrink: x + bias below -lambd, x - bias above lambd, 0 between.
void shrink_of(const float* x, float* y, int64_t n, float lambd, float bias);
void thresholded_relu_of(const float* x, float* y, int64_t n, float alpha);  // x above alpha, else 0
void isnan_of(const float* x, bool* y, int64_t n);
void isinf_of(const float* x, bool* y, int64_t n, bool detect_negative, bool detect_positive);
// DynamicQuantizeLinear's two passes: the smallest and largest of x[0..n) and the `low` and `high`
// given (NaN ignored), and y = saturate(round half to even (x / scale) + zero) in [0, 255], NaN to
// zero (zero an integer in [0, 255]).
void extend_range(const float* x, int64_t n, float& low, float& high);
void quantize_uint8(const float* x, int64_t n, float scale, float zero, uint8_t* y);
// y = (x - zero_point) x scale: QuantizeLinear's inverse over uint8 x[0..n).
void dequantize_uint8(const uint8_t* x, int64_t n, const ops::Uint8Quantization& q, float* y);
// y = x widened from bfloat16 (its bits the high half of the float's).
void bf16_to_float(const uint16_t* x, int64_t n, float* y);

}  // namespace kiln::providers::cpu
