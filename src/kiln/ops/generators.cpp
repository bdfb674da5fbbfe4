// Op family generators: ops whose output is made rather than computed from input elements —
// Constant, ConstantOfShape, Range, EyeLike.
#include <cmath>

#include "kiln/ops/data_movement.h"
#include "kiln/ops/op_families.h"
#include "kiln/ops/op_helpers.h"
#include "kiln/ops/op_registry.h"

namespace kiln::ops {

Result<Tensor> fill_value(const ir::Node& node) {
  const Tensor* t = node.attr_tensor("value");
  if (!t) return Tensor::from_vector<float>(DType::kFloat, {1}, {0.0f});
  if (t->element_count() != 1) return invalid_model(node.describe() + ": value must hold exactly one element");
  return *t;
}

namespace {

// ---- Constant ----

// The tensor a Constant node holds, from whichever value attribute it carries.
Result<Tensor> constant_tensor(const ir::Node& node) {
  const std::string who = node.describe() + ": ";
  std::vector<std::string> present;
  for (const char* key : {"value", "sparse_value", "value_float", "value_floats", "value_int", "value_ints",
                          "value_string", "value_strings"})
    if (node.has_attr(key)) present.push_back(key);
  if (present.size() != 1) return invalid_model(who + "needs exactly one value attribute, has " + std::to_string(present.size()));
  const std::string& key = present[0];
  const ir::Attribute& a = *node.attr(key);
  if (key == "value") {
    if (a.kind != ir::Attribute::Kind::kTensor || !a.t.defined()) return invalid_model(who + "value is not a tensor");
    return a.t;
  }
  if (key == "sparse_value") return unsupported_operator(who + "sparse_value constants are not supported");
  if (key == "value_float") return Tensor::from_vector<float>(DType::kFloat, {}, {a.f});
  if (key == "value_floats") return Tensor::from_vector<float>(DType::kFloat, {static_cast<int64_t>(a.floats.size())}, a.floats);
  if (key == "value_int") return Tensor::from_vector<int64_t>(DType::kInt64, {}, {a.i});
  if (key == "value_ints") return make_int64_tensor(a.ints);
  if (key == "value_string") return Tensor::from_vector<std::string>(DType::kString, {}, {a.s});
  return Tensor::from_vector<std::string>(DType::kString, {static_cast<int64_t>(a.strings.size())}, a.strings);
}

Status constant_infer(InferenceContext& ctx) {
  Result<Tensor> t = constant_tensor(ctx.node());
  if (!t.is_ok()) return t.status();
  ctx.set_output_type(0, ir::make_type(t->dtype(), t->shape()));
  ctx.set_output_value(0, t.value());
  return Status::ok();
}

Status constant_kernel(KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Tensor t, constant_tensor(ctx.node()));
  copy_all_elements(t, *ctx.output(0));
  return Status::ok();
}

// ---- ConstantOfShape ----


Status constant_of_shape_infer(InferenceContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Tensor value, fill_value(ctx.node()));
  KILN_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> shape, known_int64s(ctx, 0, "shape"));
  if (shape) {
    for (int64_t d : *shape)
      if (d < 0) return ctx.error("shape value " + std::to_string(d) + " is negative");
    ctx.set_output_type(0, ir::make_type(value.dtype(), *shape));
  } else if (const auto& st = ctx.input_type(0).shape; st && st->rank() == 1 && st->dims()[0].is_static()) {
    ctx.set_output_type(0, ir::TensorType{value.dtype(), unknown_shape(static_cast<size_t>(st->dims()[0].value()))});
  } else {
    ctx.set_output_type(0, ir::TensorType{value.dtype(), std::nullopt});
  }
  return Status::ok();
}

Status constant_of_shape_kernel(KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Tensor value, fill_value(ctx.node()));
  Tensor& out = *ctx.output(0);
  visit_storage(out.dtype(), [&]<class T>() { std::fill_n(out.data<T>(), out.element_count(), value.data<T>()[0]); });
  return Status::ok();
}

// ---- Range ----

// Element count of Range(start, limit, delta): max(ceil((limit - start) / delta), 0); exact for integers.
Result<int64_t> range_count(const Tensor& start, const Tensor& limit, const Tensor& delta, const std::string& who) {
  if (start.element_count() != 1 || limit.element_count() != 1 || delta.element_count() != 1)
    return invalid_model(who + "start, limit and delta must be scalars");
  int64_t count = -1;
  visit_dtype(start.dtype(), [&]<class T>() {
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      const int64_t s = start.data<T>()[0], l = limit.data<T>()[0], d = delta.data<T>()[0];
      if (d != 0) count = std::max<int64_t>((l - s) / d + ((l - s) % d != 0 && ((l - s) > 0) == (d > 0)), 0);
    } else if constexpr (std::is_floating_point_v<T>) {
      const double d = static_cast<double>(delta.data<T>()[0]);
      const double span = static_cast<double>(limit.data<T>()[0]) - static_cast<double>(start.data<T>()[0]);
      if (d != 0) count = std::max<int64_t>(static_cast<int64_t>(std::ceil(span / d)), 0);
    }
  });
  if (count < 0) return invalid_model(who + "delta must be non-zero and the type float, double, int16, int32 or int64");
  return count;
}

Status range_infer(InferenceContext& ctx) {
  const DType dtype = ctx.input_type(0).dtype;
  for (size_t i = 1; i < 3; ++i)
    if (ctx.input_type(i).dtype != dtype) return ctx.error("start, limit and delta must have the same type");
  if (ctx.input_value(0) && ctx.input_value(1) && ctx.input_value(2)) {
    KILN_ASSIGN_OR_RETURN(int64_t n, range_count(*ctx.input_value(0), *ctx.input_value(1), *ctx.input_value(2),
                                                 ctx.node().describe() + ": "));
    ctx.set_output_type(0, ir::make_type(dtype, {n}));
  } else {
    ctx.set_output_type(0, ir::TensorType{dtype, unknown_shape(1)});
  }
  return Status::ok();
}

Status range_kernel(KernelContext& ctx) {
  Tensor& out = *ctx.output(0);
  visit_dtype(out.dtype(), [&]<class T>() {
    if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) {
      const T start = ctx.input(0)->data<T>()[0], delta = ctx.input(2)->data<T>()[0];
      for (int64_t i = 0; i < out.element_count(); ++i) out.data<T>()[i] = static_cast<T>(start + static_cast<T>(i) * delta);
    }
  });
  return Status::ok();
}

// ---- EyeLike ----

Result<DType> eye_dtype(const ir::Node& node, DType input) {
  if (!node.has_attr("dtype")) return input;
  const int64_t code = node.attr_int("dtype", 0);
  if (!dtype_is_known(static_cast<int32_t>(code)) || code == 0 || code == static_cast<int64_t>(DType::kString))
    return invalid_model(node.describe() + ": dtype " + std::to_string(code) + " is not a numeric type");
  return static_cast<DType>(code);
}

Status eye_like_infer(InferenceContext& ctx) {
  const ir::TensorType& in = ctx.input_type(0);
  if (in.shape && in.shape->rank() != 2) return ctx.error("input must have rank 2");
  KILN_ASSIGN_OR_RETURN(DType dtype, eye_dtype(ctx.node(), in.dtype));
  ctx.set_output_type(0, ir::TensorType{dtype, in.shape});
  return Status::ok();
}

Status eye_like_kernel(KernelContext& ctx) {
  Tensor& out = *ctx.output(0);
  const int64_t rows = out.shape()[0], cols = out.shape()[1], k = ctx.node().attr_int("k", 0);
  bool numeric = false;
  visit_dtype(out.dtype(), [&]<class T>() {
    if constexpr (!std::is_same_v<T, std::string>) {
      numeric = true;
      T* o = out.data<T>();
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < cols; ++c) o[r * cols + c] = from_double<T>(c - r == k ? 1.0 : 0.0);
    }
  });
  if (!numeric) return ctx.error(std::string("unsupported output type ") + dtype_name(out.dtype()));
  return Status::ok();
}

}  // namespace

void register_generator_ops(OpRegistry& r) {
  for (int v : {1, 9, 11, 12, 13, 19, 21}) r.add({"", "Constant", v, constant_infer, constant_kernel});
  for (int v : {9, 20, 21}) r.add({"", "ConstantOfShape", v, with_required_inputs(1, constant_of_shape_infer), constant_of_shape_kernel});
  r.add({"", "Range", 11, with_required_inputs(3, range_infer), range_kernel});
  r.add({"", "EyeLike", 9, with_required_inputs(1, eye_like_infer), eye_like_kernel});
}

}  // namespace kiln::ops
