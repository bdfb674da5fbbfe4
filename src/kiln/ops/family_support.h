// Support shared by the elementwise, cast, softmax, reduce, normalization and matmul families:
// compile-time dtype lists with dispatch over them, the arithmetic ("compute") type of each storage
// type, and the input checks their shape rules start with.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

#include "kiln/ir/float16.h"
#include "kiln/ir/float8.h"
#include "kiln/ops/op_registry.h"
#include "kiln/tensor.h"

namespace kiln::ops {

template <class... Ts>
struct TypeList {};

template <class... A, class... B>
TypeList<A..., B...> concat_types(TypeList<A...>, TypeList<B...>);
template <class L1, class L2>
using ConcatTypes = decltype(concat_types(L1{}, L2{}));

using FloatTypes = TypeList<float, double, Float16, BFloat16>;
using SignedIntTypes = TypeList<int8_t, int16_t, int32_t, int64_t>;
using UnsignedIntTypes = TypeList<uint8_t, uint16_t, uint32_t, uint64_t>;
using IntTypes = ConcatTypes<SignedIntTypes, UnsignedIntTypes>;
using SignedTypes = ConcatTypes<FloatTypes, SignedIntTypes>;
using NumericTypes = ConcatTypes<FloatTypes, IntTypes>;
using BoolTypes = TypeList<bool>;
using NumericOrBoolTypes = ConcatTypes<NumericTypes, BoolTypes>;
using AllTypes = ConcatTypes<NumericOrBoolTypes, TypeList<std::string>>;
// The narrow types of opsets 19 and 21, which only Cast, quantization and data movement take.
using Float8Types = TypeList<Float8E4M3FN, Float8E4M3FNUZ, Float8E5M2, Float8E5M2FNUZ>;
using Int4Types = TypeList<Int4, UInt4>;
using NarrowTypes = ConcatTypes<Float8Types, Int4Types>;

// The ONNX element type whose storage type is T.
template <class T>
constexpr DType dtype_of() {
  if constexpr (std::is_same_v<T, float>) return DType::kFloat;
  else if constexpr (std::is_same_v<T, double>) return DType::kDouble;
  else if constexpr (std::is_same_v<T, Float16>) return DType::kFloat16;
  else if constexpr (std::is_same_v<T, BFloat16>) return DType::kBFloat16;
  else if constexpr (std::is_same_v<T, int8_t>) return DType::kInt8;
  else if constexpr (std::is_same_v<T, int16_t>) return DType::kInt16;
  else if constexpr (std::is_same_v<T, int32_t>) return DType::kInt32;
  else if constexpr (std::is_same_v<T, int64_t>) return DType::kInt64;
  else if constexpr (std::is_same_v<T, uint8_t>) return DType::kUInt8;
  else if constexpr (std::is_same_v<T, uint16_t>) return DType::kUInt16;
  else if constexpr (std::is_same_v<T, uint32_t>) return DType::kUInt32;
  else if constexpr (std::is_same_v<T, uint64_t>) return DType::kUInt64;
  else if constexpr (std::is_same_v<T, bool>) return DType::kBool;
  else if constexpr (std::is_same_v<T, std::string>) return DType::kString;
  else if constexpr (std::is_same_v<T, Float8E4M3FN>) return DType::kFloat8E4M3FN;
  else if constexpr (std::is_same_v<T, Float8E4M3FNUZ>) return DType::kFloat8E4M3FNUZ;
  else if constexpr (std::is_same_v<T, Float8E5M2>) return DType::kFloat8E5M2;
  else if constexpr (std::is_same_v<T, Float8E5M2FNUZ>) return DType::kFloat8E5M2FNUZ;
  else if constexpr (std::is_same_v<T, Int4>) return DType::kInt4;
  else if constexpr (std::is_same_v<T, UInt4>) return DType::kUInt4;
  else return DType::kUndefined;
}

template <class... Ts>
constexpr bool list_has(TypeList<Ts...>, DType dtype) {
  return ((dtype == dtype_of<Ts>()) || ...);
}

// Calls fn.template operator()<T>() with T the storage type of `dtype` when it is in List;
// false (without calling) otherwise. Only List's types are instantiated.
template <class List, class F>
bool dispatch(DType dtype, F&& fn) {
  return [&]<class... Ts>(TypeList<Ts...>) {
    return ((dtype == dtype_of<Ts>() ? (fn.template operator()<Ts>(), true) : false) || ...);
  }(List{});
}

// Arithmetic happens in float for the 16-bit and 8-bit float formats, in int for the 4-bit
// integers and in the storage type otherwise.
template <class T>
inline constexpr bool is_half_v = std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>;
template <class T>
inline constexpr bool is_int4_v = std::is_same_v<T, Int4> || std::is_same_v<T, UInt4>;
template <class T>
using Compute = std::conditional_t<is_half_v<T> || ir::is_float8_v<T>, float, std::conditional_t<is_int4_v<T>, int, T>>;

template <class T>
Compute<T> load(const T& v) {
  if constexpr (is_half_v<T> || ir::is_float8_v<T>) return ir::to_float(v);
  else if constexpr (is_int4_v<T>) return v.value;
  else return v;
}
// A value stored as T: 16-bit floats round to nearest even, 8-bit floats too and saturate, 4-bit
// integers round to nearest even and saturate (NaN gives 0).
template <class T, class V>
T store(V v) {
  if constexpr (std::is_same_v<T, Float16>) return ir::to_float16(static_cast<float>(v));
  else if constexpr (std::is_same_v<T, BFloat16>) return ir::to_bfloat16(static_cast<float>(v));
  else if constexpr (ir::is_float8_v<T>) return ir::to_float8<T>(static_cast<float>(v));
  else if constexpr (is_int4_v<T>) {
    constexpr double lo = std::is_same_v<T, Int4> ? -8 : 0, hi = std::is_same_v<T, Int4> ? 7 : 15;
    const double r = std::nearbyint(static_cast<double>(v));
    return T{static_cast<decltype(T::value)>(std::isnan(r) ? 0 : std::clamp(r, lo, hi))};
  } else return static_cast<T>(v);
}

// Floating value -> integer type without undefined behaviour: truncates toward zero, saturates
// out-of-range values, NaN gives 0.
template <class I>
I saturating_cast(double v) {
  if (std::isnan(v)) return 0;
  if (v <= static_cast<double>(std::numeric_limits<I>::lowest())) return std::numeric_limits<I>::lowest();
  if (v >= static_cast<double>(std::numeric_limits<I>::max())) return std::numeric_limits<I>::max();
  return static_cast<I>(v);
}

// Element-wise ops: the output element type is the input's (SameType) or a fixed one (bool).
struct SameType {};
template <class Out, class T>
using OutputOf = std::conditional_t<std::is_same_v<Out, SameType>, T, Out>;

// An element-wise op's per-element function factory for functions that read no attributes:
// element-wise ops take `make_fn(node) -> fn` so attributes are read once per run.
template <class F>
auto pure(F fn) {
  return [fn](const ir::Node&) { return fn; };
}

// InvalidModel unless inputs [0, required) are present and nothing past `max_inputs` is given.
Status check_input_count(const InferenceContext& ctx, size_t required, size_t max_inputs);

// InvalidModel unless input i's dtype is in List (an unknown dtype passes).
template <class List>
Status check_input_dtype(const InferenceContext& ctx, size_t i) {
  const DType d = ctx.input_type(i).dtype;
  if (d == DType::kUndefined || list_has(List{}, d)) return Status::ok();
  return ctx.error("input " + std::to_string(i) + " has unsupported element type " + dtype_name(d));
}

// InvalidModel unless inputs i and j have the same dtype (unknown dtypes pass).
Status check_same_dtype(const InferenceContext& ctx, size_t i, size_t j);

}  // namespace kiln::ops
