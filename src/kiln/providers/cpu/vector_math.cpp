// The array forms of vector_math.h's functions, built with -fno-trapping-math (CMakeLists.txt) so
// that GCC vectorises them: 7x faster than the same loops with trapping math.
#include "kiln/providers/cpu/vector_math.h"

#include <cmath>
#include <limits>

namespace kiln::providers::cpu {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kPi = 3.14159265358979323846f, kHalfPi = 1.57079632679489661923f, kLn2 = 0.693147180559945309f;

// log(x) for every float: x = m 2^e with m in [sqrt(1/2), sqrt(2)), log m by Cephes' polynomial in
// m - 1, e ln 2 in two parts; subnormals scaled by 2^23 first; 0, negatives, inf and NaN selected.
inline float log_vectorisable(float x) {
  const bool subnormal = x < 1.17549435e-38f;
  // (Written so that GCC vectorises it: a select feeding the bit_cast, or an integer select in e, keeps it scalar.)
  const int32_t bits = std::bit_cast<int32_t>(x * (subnormal ? 8388608.0f : 1.0f));
  const float m = std::bit_cast<float>((bits & 0x007fffff) | 0x3f000000);  // [0.5, 1)
  const bool low = m < 0.707106781186547524f;
  const float e = static_cast<float>(((bits >> 23) & 0xff) - 126) - (low ? 1.0f : 0.0f) - (subnormal ? 23.0f : 0.0f);
  const float f = low ? m + m - 1.0f : m - 1.0f, z = f * f;
  float p = 7.0376836292e-2f;
  p = p * f - 1.1514610310e-1f;
  p = p * f + 1.1676998740e-1f;
  p = p * f - 1.2420140846e-1f;
  p = p * f + 1.4249322787e-1f;
  p = p * f - 1.6668057665e-1f;
  p = p * f + 2.0000714765e-1f;
  p = p * f - 2.4999993993e-1f;
  p = p * f + 3.3333331174e-1f;
  const float y = f * z * p + e * -2.12194440e-4f - 0.5f * z;
  const float r = (f + y) + e * 0.693359375f;
  return x != x ? x : x < 0 ? kNaN : x == 0 ? -kInf : x == kInf ? kInf : r;
}

inline float log1p_vectorisable(float y) {
  const float u = 1.0f + y, d = u - 1.0f;
  return d == 0 ? y : u == kInf ? kInf : log_vectorisable(u) * (y / d);
}

// asin(t) for |t| <= 0.5.
inline float asin_small(float t) {
  const float z = t * t;
  return ((((4.2163199048e-2f * z + 2.4181311049e-2f) * z + 4.5470025998e-2f) * z + 7.4953002686e-2f) * z + 1.6666752422e-1f) *
             z * t +
         t;
}

inline float asin_vectorisable(float x) {
  const float a = std::fabs(x);
  const bool far = a > 0.5f;  // asin a = pi/2 - 2 asin(sqrt((1 - a) / 2)); NaN past 1
  const float p = asin_small(far ? std::sqrt(0.5f * (1.0f - a)) : a);
  return std::copysign(far ? kHalfPi - (p + p) : p, x);
}

inline float acos_vectorisable(float x) {
  const float near_one = 2.0f * asin_small(std::sqrt(0.5f * (1.0f - x)));
  const float near_minus_one = kPi - 2.0f * asin_small(std::sqrt(0.5f * (1.0f + x)));
  return x > 0.5f ? near_one : x < -0.5f ? near_minus_one : kHalfPi - asin_small(x);
}

inline float atan_vectorisable(float x) {
  const float a = std::fabs(x);
  const bool big = a > 2.414213562373095f, mid = a > 0.414213562373095f;  // tan(3 pi/8), tan(pi/8)
  const float t = big ? -1.0f / a : mid ? (a - 1.0f) / (a + 1.0f) : a;
  const float base = big ? kHalfPi : mid ? 0.25f * kPi : 0.0f;
  const float z = t * t;
  return std::copysign(base + ((((8.05374449538e-2f * z - 1.38776856032e-1f) * z + 1.99777106478e-1f) * z - 3.33329491539e-1f) * z * t + t), x);
}

// e^a / 2 for a >= 0, overflowing to inf only past 89.4 as the result does (exp_vectorisable
// clamps its argument at 88.3).
inline float half_exp(float a) {
  const float h = exp_vectorisable(0.5f * a);
  return a < 88.0f ? 0.5f * exp_vectorisable(a) : (0.5f * h) * h;
}

inline float sinh_vectorisable(float x) {
  const float a = std::fabs(x), a2 = a * a;
  const float series = a * (1.0f + a2 * (1.0f / 6 + a2 * (1.0f / 120 + a2 * (1.0f / 5040 + a2 * (1.0f / 362880 + a2 / 39916800)))));
  const float e = half_exp(a);
  return std::copysign(a < 1.0f ? series : e - 0.25f / e, x);
}

inline float cosh_vectorisable(float x) {
  const float e = half_exp(std::fabs(x));
  return e + 0.25f / e;
}

inline float asinh_vectorisable(float x) {
  const float a = std::fabs(x);
  // log(a + sqrt(a^2 + 1)) as log1p(a + a^2 / (1 + sqrt(a^2 + 1))); log(a) + ln 2 where a^2 would overflow.
  return std::copysign(a > 1e9f ? log_vectorisable(a) + kLn2 : log1p_vectorisable(a + a * a / (1.0f + std::sqrt(a * a + 1.0f))), x);
}

inline float acosh_vectorisable(float x) {
  const float t = x - 1.0f;  // log(x + sqrt(x^2 - 1)) as log1p(t + sqrt(2t + t^2))
  const float v = x > 1e9f ? log_vectorisable(x) + kLn2 : log1p_vectorisable(t + std::sqrt(t * (2.0f + t)));
  return x < 1.0f ? kNaN : v;
}

inline float atanh_vectorisable(float x) {
  const float a = std::fabs(x);
  return std::copysign(0.5f * log1p_vectorisable((a + a) / (1.0f - a)), x);
}

// y[i] = f(x[i]), vectorised.
template <class F>
inline void each(const float* x, float* y, int64_t n, F f) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) y[i] = f(x[i]);
}

}  // namespace

void sigmoid_in_place(float* x, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) x[i] = sigmoid_vectorisable(x[i]);
}

void tanh_in_place(float* x, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) x[i] = tanh_vectorisable(x[i]);
}

void erf_of(const float* x, float* y, int64_t n) { each(x, y, n, [](float v) { return erf_vectorisable(v); }); }

namespace {

// The vector pass, then libm for the arguments past the reduction's range (and NaN, inf: libm's
// answers).
void trig_of(const float* x, float* y, int64_t n, bool cosine) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) y[i] = sin_or_cos_vectorisable(x[i], cosine);
  for (int64_t i = 0; i < n; ++i)
    if (!(std::fabs(x[i]) < kTrigReductionLimit)) y[i] = cosine ? std::cos(x[i]) : std::sin(x[i]);
}

}  // namespace

void cube_of(const float* x, float* y, int64_t n) { each(x, y, n, [](float v) { return v * v * v; }); }

void sin_of(const float* x, float* y, int64_t n) { trig_of(x, y, n, false); }
void cos_of(const float* x, float* y, int64_t n) { trig_of(x, y, n, true); }

void tan_of(const float* x, float* y, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) {
    const ReducedTrig t = reduce_trig(x[i]);
    y[i] = x[i] == 0 ? x[i] : (t.quadrant & 1) ? -t.cos_r / t.sin_r : t.sin_r / t.cos_r;  // tan(-0) = -0
  }
  for (int64_t i = 0; i < n; ++i)
    if (!(std::fabs(x[i]) < kTrigReductionLimit)) y[i] = std::tan(x[i]);
}

void asin_of(const float* x, float* y, int64_t n) { each(x, y, n, [](float v) { return asin_vectorisable(v); }); }
void acos_of(const float* x, float* y, int64_t n) { each(x, y, n, [](float v) { return acos_vectorisable(v); }); }
void atan_of(const float* x, float* y, int64_t n) { each(x, y, n, [](float v) { return atan_vectorisable(v); }); }
void sinh_of(const float* x, float* y, int64_t n) { each(x, y, n, [](float v) { return sinh_vectorisable(v); }); }
void cosh_of(const float* x, float* y, int64_t n) { each(x, y, n, [](float v) { return cosh_vectorisable(v); }); }
void asinh_of(const float* x, float* y, int64_t n) { each(x, y, n, [](float v) { return asinh_vectorisable(v); }); }
void acosh_of(const float* x, float* y, int64_t n) { each(x, y, n, [](float v) { return acosh_vectorisable(v); }); }
void atanh_of(const float* x, float* y, int64_t n) { each(x, y, n, [](float v) { return atanh_vectorisable(v); }); }
void sign_of(const float* x, float* y, int64_t n) {
  each(x, y, n, [](float v) { return v > 0 ? 1.0f : v < 0 ? -1.0f : 0.0f; });
}
void floor_of(const float* x, float* y, int64_t n) { each(x, y, n, [](float v) { return std::floor(v); }); }
void ceil_of(const float* x, float* y, int64_t n) { each(x, y, n, [](float v) { return std::ceil(v); }); }
void softsign_of(const float* x, float* y, int64_t n) { each(x, y, n, [](float v) { return v / (1.0f + std::fabs(v)); }); }

void shrink_of(const float* x, float* y, int64_t n, float lambd, float bias) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] < -lambd ? x[i] + bias : x[i] > lambd ? x[i] - bias : 0.0f;
}

void thresholded_relu_of(const float* x, float* y, int64_t n, float alpha) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] > alpha ? x[i] : 0.0f;
}

void isnan_of(const float* x, bool* y, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] != x[i];
}

void extend_range(const float* x, int64_t n, float& low, float& high) {
  float l = low, h = high;
#pragma omp simd reduction(min : l) reduction(max : h)
  for (int64_t i = 0; i < n; ++i) {
    l = x[i] < l ? x[i] : l;  // NaN compares false: ignored
    h = x[i] > h ? x[i] : h;
  }
  low = l;
  high = h;
}

void quantize_uint8(const float* x, int64_t n, float scale, float zero, uint8_t* y) {
  constexpr float kRound = 12582912.0f;  // 1.5 * 2^23: adding and subtracting it rounds half to even
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) {
    float v = x[i] / scale;
    v = v < -4194304.0f ? -4194304.0f : v > 4194304.0f ? 4194304.0f : v;  // where the rounding is exact
    float q = (v + kRound) - kRound + zero;
    q = q < 0.0f ? 0.0f : q > 255.0f ? 255.0f : q;
    y[i] = static_cast<uint8_t>(static_cast<int32_t>(x[i] != x[i] ? zero : q));
  }
}

void dequantize_uint8(const uint8_t* x, int64_t n, const ops::Uint8Quantization& q, float* y) {
  const float zero = static_cast<float>(q.zero_point), scale = q.scale;
#pragma omp parallel for simd schedule(static) if (n >= (1 << 16))
  for (int64_t i = 0; i < n; ++i) y[i] = (static_cast<float>(x[i]) - zero) * scale;
}

void bf16_to_float(const uint16_t* x, int64_t n, float* y) {
#pragma omp parallel for simd schedule(static) if (n >= (1 << 16))
  for (int64_t i = 0; i < n; ++i) y[i] = std::bit_cast<float>(static_cast<uint32_t>(x[i]) << 16);
}

void isinf_of(const float* x, bool* y, int64_t n, bool detect_negative, bool detect_positive) {
  const float low = detect_negative ? -kInf : kNaN, high = detect_positive ? kInf : kNaN;  // NaN matches nothing
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] == low || x[i] == high;
}

}  // namespace kiln::providers::cpu
