// Cast and CastLike: every pair of numeric, bool and string element types, and (opset 19) the
// 8-bit floats and (opset 21) the 4-bit integers to and from the numeric and bool types. Floats
// print as the shortest text that reads back to the same value (numpy's str()); float -> bfloat16
// truncates, as the ONNX 1.12 backend test data expects.
#include <charconv>
#include <cstdlib>
#include <cstring>

#include "kiln/ops/cast.h"
#include "kiln/ops/family_support.h"
#include "kiln/ops/op_families.h"
#include "kiln/ops/op_helpers.h"

namespace kiln::ops {
namespace {

using CastTypes = ConcatTypes<AllTypes, NarrowTypes>;

// The first opset whose Cast takes `dtype`: 19 for the 8-bit floats, 21 for the 4-bit integers.
int first_cast_opset(DType dtype) {
  if (list_has(Float8Types{}, dtype)) return 19;
  if (list_has(Int4Types{}, dtype)) return 21;
  return 1;
}

// InvalidModel unless this Cast's opset takes `dtype` and a narrow type meets no string.
Status check_cast_pair(const InferenceContext& ctx, DType from, DType to) {
  for (DType d : {from, to})
    if (d != DType::kUndefined && ctx.opset() < first_cast_opset(d))
      return ctx.error(std::string(dtype_name(d)) + " needs opset " + std::to_string(first_cast_opset(d)) + ", the model imports " +
                       std::to_string(ctx.opset()));
  const bool narrow = list_has(NarrowTypes{}, from) || list_has(NarrowTypes{}, to);
  if (narrow && (from == DType::kString || to == DType::kString))
    return ctx.error(std::string("cannot cast ") + dtype_name(from) + " to " + dtype_name(to) + " (strings meet only the wider types)");
  return Status::ok();
}

// Cast-1 names the target type ("FLOAT"); later versions give the TensorProto code.
Result<DType> cast_target(const InferenceContext& ctx) {
  const ir::Attribute* to = ctx.node().attr("to");
  if (!to) return ctx.error("attribute 'to' is required");
  if (to->kind == ir::Attribute::Kind::kString) {
    for (int32_t code = 1; code <= 16; ++code) {
      std::string name = dtype_name(static_cast<DType>(code));
      for (char& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      if (name == to->s) return static_cast<DType>(code);
    }
    return ctx.error("attribute 'to' names unknown type '" + to->s + "'");
  }
  if (!dtype_is_known(static_cast<int32_t>(to->i)) || !list_has(CastTypes{}, static_cast<DType>(to->i)))
    return ctx.error("attribute 'to' has unsupported type code " + std::to_string(to->i));
  return static_cast<DType>(to->i);
}

// Reformats shortest scientific text ("-6.048455e-01") as numpy's str() prints a float:
// positional for 1e-4 <= |v| < 1e16 (with at least one fractional digit), scientific otherwise
// ("1e-05", "1.5e+20").
std::string numpy_float_text(const std::string& sci) {
  const bool negative = sci[0] == '-';
  const size_t e = sci.find('e');
  const int exponent = std::atoi(sci.c_str() + e + 1);
  std::string digits;
  for (size_t i = 0; i < e; ++i)
    if (std::isdigit(static_cast<unsigned char>(sci[i]))) digits += sci[i];
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  const std::string sign = negative ? "-" : "";
  if (digits != "0" && (exponent < -4 || exponent >= 16)) {
    const std::string mantissa = digits.substr(0, 1) + (digits.size() > 1 ? "." + digits.substr(1) : "");
    std::string exp = std::to_string(std::abs(exponent));
    if (exp.size() < 2) exp = "0" + exp;
    return sign + mantissa + "e" + (exponent < 0 ? "-" : "+") + exp;
  }
  if (exponent < 0) return sign + "0." + std::string(static_cast<size_t>(-exponent - 1), '0') + digits;
  const size_t int_len = static_cast<size_t>(exponent) + 1;
  if (digits.size() <= int_len) return sign + digits + std::string(int_len - digits.size(), '0') + ".0";
  return sign + digits.substr(0, int_len) + "." + digits.substr(int_len);
}

// The fewest significant digits (in scientific form) that read back to the same value of type T.
template <class T>
std::string shortest_scientific(const T& v) {
  char buf[64];
  if constexpr (is_half_v<T>) {
    const float f = ir::to_float(v);
    for (int precision = 0; precision < 8; ++precision) {
      auto res = std::to_chars(buf, buf + sizeof buf, f, std::chars_format::scientific, precision);
      const std::string text(buf, res.ptr);
      if (store<T>(std::strtof(text.c_str(), nullptr)).bits == v.bits) return text;
    }
    return std::string(buf, std::to_chars(buf, buf + sizeof buf, f, std::chars_format::scientific).ptr);
  } else {
    return std::string(buf, std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific).ptr);
  }
}

template <class T>
std::string to_text(const T& v) {
  if constexpr (std::is_same_v<T, bool>) {
    return v ? "True" : "False";
  } else if constexpr (std::is_integral_v<T>) {
    return std::to_string(v);
  } else {
    const double d = load(v);
    if (std::isnan(d)) return "nan";
    if (std::isinf(d)) return d < 0 ? "-inf" : "inf";
    return numpy_float_text(shortest_scientific(v));
  }
}

// Text -> number: decimal or scientific, "NaN", "INF", "-INF", "inf"...; integers exactly.
template <class T>
bool from_text(const std::string& s, T& out) {
  if constexpr (std::is_same_v<T, bool>) {
    if (s == "True" || s == "true") return out = true, true;
    if (s == "False" || s == "false") return out = false, true;
  }
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    T v{};
    const char* begin = s.data() + (!s.empty() && s[0] == '+' ? 1 : 0);
    auto [ptr, ec] = std::from_chars(begin, s.data() + s.size(), v);
    if (ec == std::errc() && ptr == s.data() + s.size()) return out = v, true;
  }
  char* end = nullptr;
  const double d = std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size()) return false;
  if constexpr (std::is_same_v<T, bool>) out = d != 0;
  else if constexpr (std::is_integral_v<T>) out = saturating_cast<T>(d);
  else out = store<T>(d);
  return true;
}

// Casts every element of `in` into `out` (already of the target type and shape); `saturate` is
// Cast's attribute (opset 19 on), read only by the 8-bit float targets.
Status cast_tensor(const KernelContext& ctx, const Tensor& in, Tensor& out, bool saturate) {
  bool parsed = true, supported = true;
  const bool ok = dispatch<CastTypes>(in.dtype(), [&]<class From>() {
    dispatch<CastTypes>(out.dtype(), [&]<class To>() {
      constexpr bool from_string = std::is_same_v<From, std::string>, to_string = std::is_same_v<To, std::string>;
      constexpr bool narrow = list_has(NarrowTypes{}, dtype_of<From>()) || list_has(NarrowTypes{}, dtype_of<To>());
      const From* src = in.data<From>();
      To* dst = out.data<To>();
      if constexpr ((from_string || to_string) && narrow) {
        supported = false;
      } else {
        for (int64_t i = 0; i < in.element_count(); ++i) {
          if constexpr (from_string && to_string) {
            dst[i] = src[i];
          } else if constexpr (from_string) {
            parsed = parsed && from_text(src[i], dst[i]);
          } else if constexpr (to_string) {
            dst[i] = to_text(src[i]);
          } else {
            dst[i] = convert_number<To>(src[i], saturate);
          }
        }
      }
    });
  });
  if (!ok || !supported || !list_has(CastTypes{}, out.dtype()))
    return ctx.error(std::string("cannot cast ") + dtype_name(in.dtype()) + " to " + dtype_name(out.dtype()));
  if (!parsed) return ctx.error("a string does not hold a number of type " + std::string(dtype_name(out.dtype())));
  return Status::ok();
}

Status cast_rule(InferenceContext& ctx) {
  KILN_RETURN_IF_ERROR(check_input_count(ctx, 1, 1));
  KILN_RETURN_IF_ERROR(check_input_dtype<CastTypes>(ctx, 0));
  KILN_ASSIGN_OR_RETURN(DType to, cast_target(ctx));
  KILN_RETURN_IF_ERROR(check_cast_pair(ctx, ctx.input_type(0).dtype, to));
  ctx.set_output_type(0, ir::TensorType{to, ctx.input_type(0).shape});
  return Status::ok();
}

Status cast_like_rule(InferenceContext& ctx) {
  KILN_RETURN_IF_ERROR(check_input_count(ctx, 2, 2));
  KILN_RETURN_IF_ERROR(check_input_dtype<CastTypes>(ctx, 0));
  KILN_RETURN_IF_ERROR(check_input_dtype<CastTypes>(ctx, 1));
  KILN_RETURN_IF_ERROR(check_cast_pair(ctx, ctx.input_type(0).dtype, ctx.input_type(1).dtype));
  ctx.set_output_type(0, ir::TensorType{ctx.input_type(1).dtype, ctx.input_type(0).shape});
  return Status::ok();
}

Status cast_kernel(KernelContext& ctx) {
  return cast_tensor(ctx, *ctx.input(0), *ctx.output(0), cast_saturates(ctx.node()));
}

}  // namespace

void register_cast_ops(OpRegistry& r) {
  // 19 adds the 8-bit floats and `saturate`, 21 the 4-bit integers.
  for (int v : {1, 6, 9, 13, 19, 21}) r.add(OpDef{"", "Cast", v, cast_rule, cast_kernel});
  for (int v : {15, 19, 21}) r.add(OpDef{"", "CastLike", v, cast_like_rule, cast_kernel});
}

}  // namespace kiln::ops
