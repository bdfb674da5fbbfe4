// The element functions of Add, Sub, Mul, Div, Mod and BitShift (the integer forms of the last three
// need care: truncation, the sign of a remainder, the most negative integer over -1, shifts past
// the width), and the folds of the variadic Sum, Mean, Max and Min, shared by the
// reference kernels (elementwise_binary.cpp) and the cpu provider's broadcast loops: the math is
// written once. Arguments are compute values (ops::load of the storage type).
#pragma once

#include <cmath>
#include <type_traits>

#include "kiln/ops/compare_select.h"
#include "kiln/ops/elementwise_math.h"
#include "kiln/tensor.h"

namespace kiln::ops {

// C division (truncating toward zero for integers, as numpy's ONNX reference does by casting a
// float quotient back); the most negative integer divided by -1 wraps instead of trapping.
template <class V>
V divide(V a, V b) {
  if constexpr (std::is_integral_v<V> && std::is_signed_v<V>) {
    if (b == -1) return static_cast<V>(0 - static_cast<std::make_unsigned_t<V>>(a));
  }
  return static_cast<V>(a / b);
}

// Whether an integer tensor holds a zero: a divisor of Div or Mod the spec leaves undefined, which
// kernels report rather than compute. Always false for floating-point tensors.
template <class T>
bool has_integer_zero(const Tensor& t) {
  if constexpr (std::is_integral_v<T>) {
    const T* v = t.data<T>();
    for (int64_t i = 0; i < t.element_count(); ++i)
      if (v[i] == 0) return true;
  }
  return false;
}

// Mod with fmod=1: the sign of the dividend (C fmod); fmod=0: the sign of the divisor (Python).
template <class V>
V modulo(V a, V b, bool c_style) {
  V r;
  if constexpr (std::is_floating_point_v<V>) {
    r = std::fmod(a, b);
  } else {
    if (is_negative(b) && b == static_cast<V>(-1)) return 0;
    r = static_cast<V>(a % b);
  }
  if (!c_style && r != 0 && is_negative(r) != is_negative(b)) r = static_cast<V>(r + b);
  return r;
}

// BitShift of unsigned integers; shifting by the width or more gives 0.
template <class V>
V shift(V x, V by, bool left) {
  if (by >= static_cast<V>(sizeof(V) * 8)) return 0;
  return static_cast<V>(left ? x << by : x >> by);
}

// Add (and Sum's fold), Sub, Mul and Div as functions.
struct SumFn {
  template <class V>
  V operator()(V a, V b) const { return a + b; }
};
struct DifferenceFn {
  template <class V>
  V operator()(V a, V b) const { return a - b; }
};
struct ProductFn {
  template <class V>
  V operator()(V a, V b) const { return a * b; }
};
struct QuotientFn {
  template <class V>
  V operator()(V a, V b) const { return divide(a, b); }
};

// The variadic ops fold their inputs in order: out = fn(out, next). Max and Min keep the value
// already there unless the next one is strictly beyond it (a NaN input after the first is passed over).
// The element-wise table's Max and Min (NaN in either operand gives NaN), for every type.
struct MaxFn {
  template <class V>
  V operator()(V a, V b) const { return elementwise_math::max_(a, b, a, b); }
};
struct MinFn {
  template <class V>
  V operator()(V a, V b) const { return elementwise_math::min_(a, b, a, b); }
};

}  // namespace kiln::ops
