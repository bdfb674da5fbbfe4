// Pow's element function, shared by the reference kernel (elementwise_binary.cpp) and the cpu
// provider's loop for exponents that are not one constant: written once. Integer powers are exact
// and wrap like numpy's; a float exponent of an integer base saturates.
#pragma once

#include <cmath>
#include <type_traits>

#include "kiln/ops/compare_select.h"
#include "kiln/ops/family_support.h"

namespace kiln::ops {

// Pow: base types T, exponent types T1 (mixed since opset 12); the result has the base's type.
using PowBaseTypes = ConcatTypes<FloatTypes, TypeList<int32_t, int64_t>>;

template <class X, class Y>
Compute<X> power(Compute<X> x, Compute<Y> y) {
  using C = Compute<X>;
  if constexpr (std::is_integral_v<C> && std::is_integral_v<Compute<Y>>) {
    if (is_negative(y)) return x == 1 ? 1 : (x == -1 ? ((y & 1) ? -1 : 1) : 0);  // trunc(x ** y)
    using U = std::make_unsigned_t<C>;  // exact, wrapping like numpy's integer power
    U result = 1, base = static_cast<U>(x);
    for (auto e = static_cast<uint64_t>(y); e != 0; e >>= 1, base *= base)
      if (e & 1) result *= base;
    return static_cast<C>(result);
  } else if constexpr (std::is_integral_v<C>) {
    return saturating_cast<C>(std::pow(static_cast<double>(x), static_cast<double>(y)));
  } else {
    return static_cast<C>(std::pow(static_cast<double>(x), static_cast<double>(y)));
  }
}

}  // namespace kiln::ops
