// The element functions of the comparisons, the logic ops, PRelu and Where's choice, shared by the
// reference kernels (elementwise_binary.cpp) and the cpu provider's broadcast loops: the math is
// written once. Arguments are compute values (ops::load of the storage type).
#pragma once

#include <algorithm>

#include <string>
#include <type_traits>

namespace kiln::ops {

template <class V>
bool is_negative(V v) {
  if constexpr (std::is_unsigned_v<V> || std::is_same_v<V, bool>) return false;
  else return v < 0;
}

struct EqualFn {
  template <class V>
  bool operator()(V a, V b) const { return a == b; }
};
struct LessFn {
  template <class V>
  bool operator()(V a, V b) const { return a < b; }
};
struct GreaterFn {
  template <class V>
  bool operator()(V a, V b) const { return a > b; }
};
struct LessOrEqualFn {
  template <class V>
  bool operator()(V a, V b) const { return a <= b; }
};
struct GreaterOrEqualFn {
  template <class V>
  bool operator()(V a, V b) const { return a >= b; }
};
struct AndFn {
  bool operator()(bool a, bool b) const { return a && b; }
};
struct OrFn {
  bool operator()(bool a, bool b) const { return a || b; }
};
struct XorFn {
  bool operator()(bool a, bool b) const { return a != b; }
};
struct NotFn {
  bool operator()(bool a) const { return !a; }
};
// The bitwise ops of opset 18, on integers of one type.
struct BitwiseAndFn {
  template <class I>
  I operator()(I a, I b) const { return static_cast<I>(a & b); }
};
struct BitwiseOrFn {
  template <class I>
  I operator()(I a, I b) const { return static_cast<I>(a | b); }
};
struct BitwiseXorFn {
  template <class I>
  I operator()(I a, I b) const { return static_cast<I>(a ^ b); }
};
struct BitwiseNotFn {
  template <class I>
  I operator()(I a) const { return static_cast<I>(~a); }
};
// PRelu: x where x >= 0, slope * x where x < 0.
struct PReluFn {
  template <class V>
  V operator()(V x, V slope) const {
    // Floats as max(x, 0) + slope * min(x, 0): the same values (but for the sign of a zero), and a
    // loop of it vectorises, where GCC keeps the select's multiply a branch (-ftrapping-math) and
    // pays a mispredict per sign change: 5 ns an element.
    if constexpr (std::is_floating_point_v<V>) return std::max(x, V(0)) + slope * std::min(x, V(0));
    else return is_negative(x) ? static_cast<V>(slope * x) : x;
  }
};

// Calls fn(f) with f the function of the comparison `op` (Equal, Less, Greater, LessOrEqual,
// GreaterOrEqual); false when `op` is not one of them.
template <class F>
bool with_comparison(const std::string& op, F&& fn) {
  if (op == "Equal") return fn(EqualFn{}), true;
  if (op == "Less") return fn(LessFn{}), true;
  if (op == "Greater") return fn(GreaterFn{}), true;
  if (op == "LessOrEqual") return fn(LessOrEqualFn{}), true;
  if (op == "GreaterOrEqual") return fn(GreaterOrEqualFn{}), true;
  return false;
}

// As with_comparison for the binary logic ops And, Or, Xor.
template <class F>
bool with_logic(const std::string& op, F&& fn) {
  if (op == "And") return fn(AndFn{}), true;
  if (op == "Or") return fn(OrFn{}), true;
  if (op == "Xor") return fn(XorFn{}), true;
  return false;
}

// As with_comparison for BitwiseAnd, BitwiseOr, BitwiseXor.
template <class F>
bool with_bitwise(const std::string& op, F&& fn) {
  if (op == "BitwiseAnd") return fn(BitwiseAndFn{}), true;
  if (op == "BitwiseOr") return fn(BitwiseOrFn{}), true;
  if (op == "BitwiseXor") return fn(BitwiseXorFn{}), true;
  return false;
}

}  // namespace kiln::ops
