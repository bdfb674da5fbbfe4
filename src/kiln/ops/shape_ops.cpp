// Op family shape ops: Shape, Size, Reshape, Flatten, Squeeze, Unsqueeze, Expand, Identity.
// Their rules carry the shape arithmetic of exported transformers (Shape -> Gather -> Concat ->
// Reshape): Shape and Size give their output values, and Reshape/Expand read their shape input's value.
#include <algorithm>
#include <set>

#include "kiln/ops/data_movement.h"
#include "kiln/ops/op_families.h"
#include "kiln/ops/op_helpers.h"
#include "kiln/ops/op_registry.h"
#include "kiln/ops/shape_ops.h"

namespace kiln::ops {
namespace {

Status copy_kernel(KernelContext& ctx) {
  copy_all_elements(*ctx.input(0), *ctx.output(0));
  return Status::ok();
}

// An int64 output type of static shape `dims`.
ir::TensorType int64_type(const std::vector<int64_t>& dims) { return ir::make_type(DType::kInt64, dims); }

// ---- Shape and Size ----

Status shape_infer(InferenceContext& ctx) {
  const ir::TensorType& in = ctx.input_type(0);
  if (!in.shape) {
    ctx.set_output_type(0, ir::TensorType{DType::kInt64, ir::Shape({ir::Dim::unknown()})});
    return Status::ok();
  }
  const auto [start, end] = shape_op_range(ctx.node(), static_cast<int64_t>(in.shape->rank()));
  ctx.set_output_type(0, int64_type({end - start}));
  std::vector<int64_t> dims;
  for (int64_t i = start; i < end; ++i) {
    const ir::Dim& d = (*in.shape)[static_cast<size_t>(i)];
    if (!d.is_static()) return Status::ok();
    dims.push_back(d.value());
  }
  ctx.set_output_value(0, make_int64_tensor(dims));
  return Status::ok();
}

Status shape_kernel(KernelContext& ctx) {
  const std::vector<int64_t>& shape = ctx.input(0)->shape();
  const auto [start, end] = shape_op_range(ctx.node(), static_cast<int64_t>(shape.size()));
  std::copy(shape.begin() + start, shape.begin() + end, ctx.output(0)->data<int64_t>());
  return Status::ok();
}

Status size_infer(InferenceContext& ctx) {
  ctx.set_output_type(0, int64_type({}));
  const ir::TensorType& in = ctx.input_type(0);
  if (in.has_static_shape())
    ctx.set_output_value(0, Tensor::from_vector<int64_t>(DType::kInt64, {}, {shape_element_count(in.shape->static_dims())}));
  return Status::ok();
}

Status size_kernel(KernelContext& ctx) {
  ctx.output(0)->data<int64_t>()[0] = ctx.input(0)->element_count();
  return Status::ok();
}

// ---- Reshape ----

// Dims split into the product of the static ones and the symbols; false when one is unknown.
bool split_dims(const std::vector<ir::Dim>& dims, int64_t& product, std::vector<ir::Dim>& symbols) {
  product = 1;
  for (const ir::Dim& d : dims) {
    if (d.is_static()) product *= d.value();
    else if (d.is_symbol()) symbols.push_back(d);
    else return false;
  }
  return true;
}

// The dim a -1 in a Reshape target stands for: the input's dims divided by the target's other dims,
// after cancelling symbols the two share. Unknown when symbols do not cancel out.
Result<ir::Dim> inferred_dim(const std::vector<ir::Dim>& in, const std::vector<ir::Dim>& known,
                             const InferenceContext& ctx) {
  int64_t in_product = 1, known_product = 1;
  std::vector<ir::Dim> in_symbols, known_symbols;
  if (!split_dims(in, in_product, in_symbols) || !split_dims(known, known_product, known_symbols))
    return ir::Dim::unknown();
  for (auto it = known_symbols.begin(); it != known_symbols.end();) {
    auto match = std::find(in_symbols.begin(), in_symbols.end(), *it);
    if (match == in_symbols.end()) return ir::Dim::unknown();
    in_symbols.erase(match);
    it = known_symbols.erase(it);
  }
  if (in_symbols.empty()) {
    if (known_product == 0 || in_product % known_product != 0)
      return ctx.error("cannot reshape " + std::to_string(in_product) + " elements: the other target dims hold " +
                       std::to_string(known_product));
    return ir::Dim(in_product / known_product);
  }
  return in_symbols.size() == 1 && in_product == known_product ? in_symbols[0] : ir::Dim::unknown();
}

Status reshape_infer(InferenceContext& ctx) {
  const ir::TensorType& in = ctx.input_type(0);
  std::optional<std::vector<int64_t>> target;
  if (ctx.opset() < 5) {
    target = ctx.node().attr_ints("shape");
  } else {
    KILN_ASSIGN_OR_RETURN(target, known_int64s(ctx, 1, "shape"));
  }
  if (!target) {
    const auto& shape_type = ctx.has_input(1) ? ctx.input_type(1).shape : std::nullopt;
    if (shape_type && shape_type->rank() == 1 && shape_type->dims()[0].is_static())
      ctx.set_output_type(0, typed_like(in, unknown_shape(static_cast<size_t>(shape_type->dims()[0].value()))));
    else
      ctx.set_output_type(0, typed_like(in, std::nullopt));
    return Status::ok();
  }
  const bool allowzero = ctx.opset() >= 14 && ctx.node().attr_int("allowzero", 0) != 0;
  std::vector<ir::Dim> dims, known;
  int64_t infer_at = -1;
  for (size_t i = 0; i < target->size(); ++i) {
    const int64_t v = (*target)[i];
    if (v < -1) return ctx.error("shape value " + std::to_string(v) + " is invalid");
    if (v == -1) {
      if (infer_at >= 0) return ctx.error("shape has more than one -1");
      infer_at = static_cast<int64_t>(i);
      dims.emplace_back();
      continue;
    }
    if (v == 0 && !allowzero) {
      if (in.shape && i >= in.shape->rank()) return ctx.error("shape copies dim " + std::to_string(i) + " of a rank-" + std::to_string(in.shape->rank()) + " input");
      dims.push_back(in.shape ? (*in.shape)[i] : ir::Dim::unknown());
    } else {
      dims.emplace_back(v);
    }
    known.push_back(dims.back());
  }
  if (allowzero && infer_at >= 0 && std::count(target->begin(), target->end(), 0) > 0)
    return ctx.error("shape holds both 0 and -1 with allowzero set");
  if (in.shape) {
    if (infer_at >= 0) {
      KILN_ASSIGN_OR_RETURN(dims[static_cast<size_t>(infer_at)], inferred_dim(in.shape->dims(), known, ctx));
    }
    const ir::Dim in_count = dims_product(in.shape->dims()), out_count = dims_product(dims);
    if (in_count.is_static() && out_count.is_static() && in_count.value() != out_count.value())
      return ctx.error("cannot reshape " + in.shape->to_string() + " to " + ir::Shape(dims).to_string());
  }
  ctx.set_output_type(0, typed_like(in, ir::Shape(dims)));
  return Status::ok();
}

// ---- Flatten ----

Status flatten_infer(InferenceContext& ctx) {
  const ir::TensorType& in = ctx.input_type(0);
  if (!in.shape) {
    ctx.set_output_type(0, typed_like(in, unknown_shape(2)));
    return Status::ok();
  }
  const int64_t rank = static_cast<int64_t>(in.shape->rank());
  int64_t axis = ctx.node().attr_int("axis", 1);
  if (axis < 0 && ctx.opset() >= 11) axis += rank;
  if (axis < 0 || axis > rank) return ctx.error("axis " + std::to_string(ctx.node().attr_int("axis", 1)) + " is out of range for rank " + std::to_string(rank));
  const auto& d = in.shape->dims();
  const ir::Dim outer = dims_product(std::vector<ir::Dim>(d.begin(), d.begin() + axis));
  const ir::Dim inner = dims_product(std::vector<ir::Dim>(d.begin() + axis, d.end()));
  ctx.set_output_type(0, typed_like(in, ir::Shape({outer, inner})));
  return Status::ok();
}

// ---- Squeeze and Unsqueeze ----

// Axes from the attribute (before opset 13) or input 1; nullopt when absent or not known.
// `given` tells whether axes were given at all.
Result<std::optional<std::vector<int64_t>>> axes_operand(const InferenceContext& ctx, bool& given) {
  if (ctx.opset() < 13) {
    given = ctx.node().has_attr("axes");
    if (!given) return std::optional<std::vector<int64_t>>();
    return std::optional<std::vector<int64_t>>(ctx.node().attr_ints("axes"));
  }
  given = ctx.has_input(1);
  if (!given) return std::optional<std::vector<int64_t>>();
  return known_int64s(ctx, 1, "axes");
}

// Normalises axes against `rank`, rejecting repeats.
Result<std::set<int64_t>> axis_set(const std::vector<int64_t>& axes, int64_t rank, const InferenceContext& ctx) {
  std::set<int64_t> out;
  for (int64_t a : axes) {
    Result<int64_t> n = normalize_axis(a, rank);
    if (!n.is_ok()) return ctx.error(n.status().message());
    if (!out.insert(n.value()).second) return ctx.error("axis " + std::to_string(a) + " is repeated");
  }
  return out;
}

Status squeeze_infer(InferenceContext& ctx) {
  const ir::TensorType& in = ctx.input_type(0);
  bool given = false;
  KILN_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> axes, axes_operand(ctx, given));
  if (!in.shape || (given && !axes)) {
    ctx.set_output_type(0, typed_like(in, std::nullopt));
    return Status::ok();
  }
  const auto& dims = in.shape->dims();
  std::set<int64_t> drop;
  if (axes) {
    KILN_ASSIGN_OR_RETURN(drop, axis_set(*axes, static_cast<int64_t>(dims.size()), ctx));
  } else {
    for (size_t i = 0; i < dims.size(); ++i) {
      if (!dims[i].is_static()) {  // might be 1: the rank is not known
        ctx.set_output_type(0, typed_like(in, std::nullopt));
        return Status::ok();
      }
      if (dims[i].value() == 1) drop.insert(static_cast<int64_t>(i));
    }
  }
  std::vector<ir::Dim> out;
  for (size_t i = 0; i < dims.size(); ++i) {
    const bool dropped = drop.count(static_cast<int64_t>(i)) != 0;
    if (dropped && dims[i].is_static() && dims[i].value() != 1)
      return ctx.error("cannot squeeze axis " + std::to_string(i) + " of size " + dims[i].to_string());
    if (!dropped) out.push_back(dims[i]);
  }
  ctx.set_output_type(0, typed_like(in, ir::Shape(out)));
  return Status::ok();
}

Status unsqueeze_infer(InferenceContext& ctx) {
  const ir::TensorType& in = ctx.input_type(0);
  bool given = false;
  KILN_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> axes, axes_operand(ctx, given));
  if (!given) return ctx.error("axes are required");
  if (!in.shape) {
    ctx.set_output_type(0, typed_like(in, std::nullopt));
    return Status::ok();
  }
  if (!axes) {
    const auto& axes_shape = ctx.input_type(1).shape;
    if (axes_shape && axes_shape->rank() == 1 && axes_shape->dims()[0].is_static())
      ctx.set_output_type(0, typed_like(in, unknown_shape(in.shape->rank() + static_cast<size_t>(axes_shape->dims()[0].value()))));
    else
      ctx.set_output_type(0, typed_like(in, std::nullopt));
    return Status::ok();
  }
  const int64_t out_rank = static_cast<int64_t>(in.shape->rank() + axes->size());
  KILN_ASSIGN_OR_RETURN(std::set<int64_t> inserted, axis_set(*axes, out_rank, ctx));
  std::vector<ir::Dim> out;
  size_t next = 0;
  for (int64_t i = 0; i < out_rank; ++i) out.push_back(inserted.count(i) ? ir::Dim(1) : (*in.shape)[next++]);
  ctx.set_output_type(0, typed_like(in, ir::Shape(out)));
  return Status::ok();
}

// ---- Expand ----

Status expand_infer(InferenceContext& ctx) {
  const ir::TensorType& in = ctx.input_type(0);
  KILN_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> target, known_int64s(ctx, 1, "shape"));
  std::optional<ir::Shape> target_shape;
  if (target) {
    for (int64_t v : *target)
      if (v < 0) return ctx.error("shape value " + std::to_string(v) + " is negative");
    target_shape = ir::Shape::from_static(*target);
  } else if (const auto& st = ctx.input_type(1).shape; st && st->rank() == 1 && st->dims()[0].is_static()) {
    target_shape = unknown_shape(static_cast<size_t>(st->dims()[0].value()));
  }
  if (!in.shape || !target_shape) {
    ctx.set_output_type(0, typed_like(in, std::nullopt));
    return Status::ok();
  }
  Result<ir::Shape> out = broadcast_shapes(*in.shape, *target_shape);
  if (!out.is_ok()) return ctx.error(out.status().message());
  ctx.set_output_type(0, typed_like(in, out.value()));
  return Status::ok();
}

Status expand_kernel(KernelContext& ctx) {
  const Tensor& in = *ctx.input(0);
  Tensor& out = *ctx.output(0);
  gather_by_offsets(in, out, strided_offsets(out.shape(), broadcast_strides(in.shape(), out.shape())));
  return Status::ok();
}

// ---- Identity ----

// Identity passes sequences and optionals through unchanged (since opset 14 and 16).
Status identity_kernel(KernelContext& ctx) {
  const Value* in = ctx.input_value(0);
  if (in && !in->is_tensor()) return ctx.set_output(0, *in);
  return copy_kernel(ctx);
}

Status identity_infer(InferenceContext& ctx) {
  ctx.set_output_type(0, ctx.input_type(0));
  return Status::ok();
}

}  // namespace

void register_shape_ops(OpRegistry& r) {
  for (int v : {1, 13, 15, 19, 21}) r.add({"", "Shape", v, with_required_inputs(1, shape_infer), shape_kernel});
  for (int v : {1, 13, 19, 21}) r.add({"", "Size", v, with_required_inputs(1, size_infer), size_kernel});
  // The shape relabellings copy their input, or nothing when the planner gives both one buffer.
  auto relabel = [&r](const char* op, int v, ShapeRule rule) {
    OpDef def{"", op, v, std::move(rule), copy_kernel};
    def.in_place_input = 0;
    r.add(std::move(def));
  };
  for (int v : {1, 5, 13, 14, 19, 21}) relabel("Reshape", v, with_required_inputs(v < 5 ? 1 : 2, reshape_infer));
  for (int v : {1, 9, 11, 13, 21}) relabel("Flatten", v, with_required_inputs(1, flatten_infer));
  for (int v : {1, 11, 13, 21}) relabel("Squeeze", v, with_required_inputs(1, squeeze_infer));
  for (int v : {1, 11, 13, 21}) relabel("Unsqueeze", v, with_required_inputs(1, unsqueeze_infer));
  for (int v : {8, 13}) r.add({"", "Expand", v, with_required_inputs(2, expand_infer), expand_kernel});
  for (int v : {1, 13, 14, 16, 19, 21})
    r.add({"", "Identity", v, with_required_inputs(1, identity_infer), identity_kernel, false, v >= 14});
}

std::pair<int64_t, int64_t> shape_op_range(const ir::Node& node, int64_t rank) {
  auto clamp = [rank](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + rank : v, 0, rank); };
  const int64_t start = clamp(node.attr_int("start", 0));
  const int64_t end = clamp(node.attr_int("end", rank));
  return {start, std::max(start, end)};
}

}  // namespace kiln::ops
