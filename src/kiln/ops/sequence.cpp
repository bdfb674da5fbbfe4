// Sequence and optional ops: SequenceConstruct/Empty/Insert/Erase/At/Length, SplitToSequence,
// ConcatFromSequence, SequenceMap, Optional, OptionalHasElement, OptionalGetElement. Their
// kernels assign whole values (OpDef::kernel_allocates_outputs); element tensors are owned copies.
#include "kiln/ops/data_movement.h"
#include "kiln/ops/op_families.h"
#include "kiln/ops/op_helpers.h"
#include "kiln/ops/op_registry.h"
#include "kiln/ops/subgraph_runner.h"

namespace kiln::ops {

namespace {

// ---- helpers ----

ir::TensorType sequence_type(DType dtype) { return ir::TensorType::sequence_of(ir::TensorType{dtype}); }

// The element type of a sequence-typed input (unknown element when not declared).
ir::TensorType element_type(const InferenceContext& ctx, size_t i) {
  const ir::TensorType& t = ctx.input_type(i);
  return t.element ? *t.element : ir::TensorType{};
}

Result<const Value*> sequence_input(const KernelContext& ctx, size_t i) {
  const Value* v = ctx.input_value(i);
  if (!v || v->kind() != Value::Kind::kSequence) return ctx.error("input " + std::to_string(i) + " must be a sequence");
  return v;
}

Tensor owned_tensor(const Tensor& t) { return t.owns_storage() ? t : t.clone(); }

// An optional scalar position input, normalised into [0, limit]; `fallback` when absent.
Result<int64_t> position(const KernelContext& ctx, size_t i, int64_t count, int64_t fallback, bool inclusive_end) {
  const Tensor* p = ctx.input(i);
  if (!p) return fallback;
  KILN_ASSIGN_OR_RETURN(auto values, read_int64s(*p, "position"));
  if (values.size() != 1) return ctx.error("position must be a scalar");
  const int64_t limit = inclusive_end ? count : count - 1;
  int64_t pos = values[0];
  if (pos < -count || pos > limit)
    return ctx.error("position " + std::to_string(pos) + " is out of range for a sequence of " + std::to_string(count));
  return pos < 0 ? pos + count : pos;
}

// x[..., begin:begin+length, ...] along `axis`.
Tensor slice_axis(const Tensor& x, int64_t axis, int64_t begin, int64_t length) {
  std::vector<int64_t> shape = x.shape();
  const int64_t full = shape[axis];
  const int64_t outer = dims_product(shape, 0, axis), inner = dims_product(shape, axis + 1, shape.size());
  shape[axis] = length;
  Tensor out = Tensor::allocate(x.dtype(), shape);
  for (int64_t o = 0; o < outer; ++o) copy_elements(x, (o * full + begin) * inner, out, o * length * inner, length * inner);
  return out;
}

// ---- SequenceConstruct, SequenceEmpty ----

Status construct_infer(InferenceContext& ctx) {
  if (ctx.input_count() == 0) return ctx.error("needs at least one input");
  for (size_t i = 1; i < ctx.input_count(); ++i)
    if (ctx.input_type(i).dtype != ctx.input_type(0).dtype) return ctx.error("inputs must share one element type");
  ctx.set_output_type(0, sequence_type(ctx.input_type(0).dtype));
  return Status::ok();
}

Status construct_kernel(KernelContext& ctx) {
  std::vector<Tensor> elements;
  for (size_t i = 0; i < ctx.input_count(); ++i) {
    if (!ctx.input(i)) return ctx.error("input " + std::to_string(i) + " must be a tensor");
    elements.push_back(owned_tensor(*ctx.input(i)));
  }
  const DType dtype = elements.front().dtype();  // read before `elements` is moved from
  return ctx.set_output(0, Value::sequence(dtype, std::move(elements)));
}

DType empty_dtype(const ir::Node& node) { return static_cast<DType>(node.attr_int("dtype", 1)); }

Status empty_infer(InferenceContext& ctx) {
  if (!dtype_is_known(static_cast<int32_t>(empty_dtype(ctx.node())))) return ctx.error("unknown dtype attribute");
  ctx.set_output_type(0, sequence_type(empty_dtype(ctx.node())));
  return Status::ok();
}

Status empty_kernel(KernelContext& ctx) { return ctx.set_output(0, Value::sequence(empty_dtype(ctx.node()), {})); }

// ---- SequenceInsert, SequenceErase, SequenceAt, SequenceLength ----

Status same_sequence_infer(InferenceContext& ctx) {
  ctx.set_output_type(0, ctx.input_type(0));
  return Status::ok();
}

Status insert_kernel(KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(const Value* seq, sequence_input(ctx, 0));
  const Tensor* t = ctx.input(1);
  if (!t) return ctx.error("the inserted value must be a tensor");
  if (t->dtype() != seq->element_dtype())
    return ctx.error(std::string("cannot insert ") + dtype_name(t->dtype()) + " into a sequence of " +
                     dtype_name(seq->element_dtype()));
  const auto count = static_cast<int64_t>(seq->elements().size());
  KILN_ASSIGN_OR_RETURN(int64_t at, position(ctx, 2, count, count, true));
  std::vector<Tensor> elements = seq->elements();
  elements.insert(elements.begin() + at, owned_tensor(*t));
  return ctx.set_output(0, Value::sequence(seq->element_dtype(), std::move(elements)));
}

Status erase_kernel(KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(const Value* seq, sequence_input(ctx, 0));
  const auto count = static_cast<int64_t>(seq->elements().size());
  if (count == 0) return ctx.error("cannot erase from an empty sequence");
  KILN_ASSIGN_OR_RETURN(int64_t at, position(ctx, 1, count, count - 1, false));
  std::vector<Tensor> elements = seq->elements();
  elements.erase(elements.begin() + at);
  return ctx.set_output(0, Value::sequence(seq->element_dtype(), std::move(elements)));
}

Status at_infer(InferenceContext& ctx) {
  ctx.set_output_type(0, element_type(ctx, 0));
  return Status::ok();
}

Status at_kernel(KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(const Value* seq, sequence_input(ctx, 0));
  const auto count = static_cast<int64_t>(seq->elements().size());
  if (!ctx.input(1)) return ctx.error("position is required");
  KILN_ASSIGN_OR_RETURN(int64_t at, position(ctx, 1, count, 0, false));
  return ctx.set_output(0, seq->elements()[static_cast<size_t>(at)].clone());
}

Status length_infer(InferenceContext& ctx) {
  ctx.set_output_type(0, ir::make_type(DType::kInt64, {}));
  return Status::ok();
}

Status length_kernel(KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(const Value* seq, sequence_input(ctx, 0));
  return ctx.set_output(
      0, Tensor::from_vector<int64_t>(DType::kInt64, {}, {static_cast<int64_t>(seq->elements().size())}));
}

// ---- SplitToSequence, ConcatFromSequence ----

Status split_infer(InferenceContext& ctx) {
  ctx.set_output_type(0, sequence_type(ctx.input_type(0).dtype));
  return Status::ok();
}

// Chunk lengths along the axis: `split` as lengths (1-D), a chunk size (scalar), or ones.
Result<std::vector<int64_t>> split_lengths(const KernelContext& ctx, int64_t length) {
  const Tensor* split = ctx.input(1);
  if (!split) return std::vector<int64_t>(static_cast<size_t>(length), 1);
  KILN_ASSIGN_OR_RETURN(auto values, read_int64s(*split, "split"));
  if (split->rank() == 0) {
    if (values[0] <= 0) return ctx.error("split must be positive");
    std::vector<int64_t> lengths(static_cast<size_t>(length / values[0]), values[0]);
    if (length % values[0]) lengths.push_back(length % values[0]);
    return lengths;
  }
  int64_t total = 0;
  for (int64_t v : values) {
    if (v < 0) return ctx.error("split lengths must be non-negative");
    total += v;
  }
  if (total != length)
    return ctx.error("split lengths sum to " + std::to_string(total) + ", not the axis length " + std::to_string(length));
  return values;
}

Status split_kernel(KernelContext& ctx) {
  const Tensor* x = ctx.input(0);
  KILN_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(ctx.node().attr_int("axis", 0), x->rank()));
  const bool squeeze = !ctx.input(1) && ctx.node().attr_int("keepdims", 1) == 0;
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> lengths, split_lengths(ctx, x->shape()[axis]));
  std::vector<Tensor> elements;
  int64_t begin = 0;
  for (int64_t len : lengths) {
    Tensor part = slice_axis(*x, axis, begin, len);
    if (squeeze) {
      std::vector<int64_t> shape = part.shape();
      shape.erase(shape.begin() + axis);
      part = part.reshaped(shape);
    }
    elements.push_back(std::move(part));
    begin += len;
  }
  return ctx.set_output(0, Value::sequence(x->dtype(), std::move(elements)));
}

Status concat_infer(InferenceContext& ctx) {
  ctx.set_output_type(0, ir::TensorType{element_type(ctx, 0).dtype});
  return Status::ok();
}

Status concat_kernel(KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(const Value* seq, sequence_input(ctx, 0));
  const auto& elements = seq->elements();
  if (elements.empty()) return ctx.error("cannot concatenate an empty sequence");
  const bool new_axis = ctx.node().attr_int("new_axis", 0) == 1;
  const int64_t rank = elements[0].rank() + (new_axis ? 1 : 0);
  KILN_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(ctx.node().attr_int("axis", 0), rank));
  std::vector<Tensor> parts;
  for (const Tensor& e : elements) {
    std::vector<int64_t> shape = e.shape();
    if (new_axis) shape.insert(shape.begin() + axis, 1);
    parts.push_back(e.reshaped(shape));
  }
  std::vector<int64_t> out_shape = parts[0].shape();
  out_shape[axis] = 0;
  for (const Tensor& p : parts) {
    for (int64_t d = 0; d < rank; ++d)
      if (d != axis && p.shape()[d] != parts[0].shape()[d])
        return ctx.error("elements " + shape_to_string(parts[0].shape()) + " and " + shape_to_string(p.shape()) +
                         " differ outside the concatenation axis");
    out_shape[axis] += p.shape()[axis];
  }
  Tensor out = Tensor::allocate(parts[0].dtype(), out_shape);
  const int64_t outer = dims_product(out_shape, 0, axis), inner = dims_product(out_shape, axis + 1, out_shape.size());
  int64_t offset = 0;
  for (const Tensor& p : parts) {
    const int64_t chunk = p.shape()[axis] * inner;
    for (int64_t o = 0; o < outer; ++o) copy_elements(p, o * chunk, out, o * out_shape[axis] * inner + offset, chunk);
    offset += chunk;
  }
  return ctx.set_output(0, std::move(out));
}

// ---- SequenceMap ----

Status map_infer(InferenceContext& ctx) {
  KILN_ASSIGN_OR_RETURN(const ir::Graph* body, subgraph_attribute(ctx.node(), "body"));
  if (body->outputs.size() != ctx.output_count()) return ctx.error("body outputs do not match the node's outputs");
  for (size_t i = 0; i < ctx.output_count(); ++i) ctx.set_output_type(i, ir::TensorType::sequence_of(body->outputs[i]->type));
  return Status::ok();
}

Status map_kernel(KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(const ir::Graph* body, subgraph_attribute(ctx.node(), "body"));
  KILN_ASSIGN_OR_RETURN(const Value* first, sequence_input(ctx, 0));
  const size_t count = first->elements().size();
  std::vector<std::vector<Tensor>> results(ctx.output_count());
  for (size_t n = 0; n < count; ++n) {
    std::vector<Value> args;
    for (size_t i = 0; i < ctx.input_count(); ++i) {
      const Value* v = ctx.input_value(i);
      if (!v) return ctx.error("input " + std::to_string(i) + " is missing");
      if (v->kind() == Value::Kind::kSequence) {
        if (v->elements().size() != count) return ctx.error("input sequences differ in length");
        args.emplace_back(v->elements()[n]);
      } else {
        args.push_back(*v);
      }
    }
    KILN_ASSIGN_OR_RETURN(std::vector<Value> out, ctx.run_body(*body, args));
    for (size_t k = 0; k < out.size(); ++k) {
      if (!out[k].is_tensor()) return ctx.error("body outputs must be tensors");
      results[k].push_back(out[k].tensor());
    }
  }
  for (size_t k = 0; k < results.size(); ++k) {
    const ir::TensorType& t = body->outputs[k]->type;
    const DType dtype = !results[k].empty() ? results[k][0].dtype() : t.dtype;
    KILN_RETURN_IF_ERROR(ctx.set_output(k, Value::sequence(dtype, std::move(results[k]))));
  }
  return Status::ok();
}

// ---- Optional, OptionalHasElement, OptionalGetElement ----

// Optional(x) wraps x; Optional() with a 'type' attribute is an empty optional of that type.
Status optional_infer(InferenceContext& ctx) {
  if (ctx.has_input(0)) {
    ctx.set_output_type(0, ir::TensorType::optional_of(ctx.input_type(0)));
    return Status::ok();
  }
  const ir::Attribute* type = ctx.node().attr("type");
  if (!type || type->kind != ir::Attribute::Kind::kType) return ctx.error("an empty Optional needs a 'type' attribute");
  ctx.set_output_type(0, ir::TensorType::optional_of(*type->type));
  return Status::ok();
}

Status optional_kernel(KernelContext& ctx) {
  const Value* in = ctx.input_value(0);
  return ctx.set_output(0, in ? Value::optional_of(owned(*in)) : Value::empty_optional());
}

// Version 15 reads an optional; version 18 also takes a tensor or a sequence (always holding an
// element) and, for OptionalHasElement, no input at all (no element).
Status check_optional_input(const InferenceContext& ctx, bool may_be_omitted) {
  if (ctx.node().opset_version >= 18) {
    if (!may_be_omitted && !ctx.has_input(0)) return ctx.error("input is missing");
    return Status::ok();
  }
  if (!ctx.has_input(0)) return ctx.error("input is missing (before opset 18 it is required)");
  if (ctx.input_type(0).is_known() && ctx.input_type(0).kind != ir::TensorType::Kind::kOptional)
    return ctx.error("input must be an optional before opset 18 (a tensor or sequence needs version 18), got " +
                     ctx.input_type(0).to_string());
  return Status::ok();
}

Status has_element_infer(InferenceContext& ctx) {
  KILN_RETURN_IF_ERROR(check_optional_input(ctx, true));
  ctx.set_output_type(0, ir::make_type(DType::kBool, {}));
  return Status::ok();
}

Status has_element_kernel(KernelContext& ctx) {
  const Value* in = ctx.input_value(0);
  const bool has = in && (in->kind() != Value::Kind::kOptional || in->has_element());
  return ctx.set_output(0, Tensor::from_vector<bool>(DType::kBool, {}, {has}));
}

Status get_element_infer(InferenceContext& ctx) {
  KILN_RETURN_IF_ERROR(check_optional_input(ctx, false));
  const ir::TensorType& t = ctx.input_type(0);
  ctx.set_output_type(0, t.kind == ir::TensorType::Kind::kOptional && t.element ? *t.element : t);
  return Status::ok();
}

Status get_element_kernel(KernelContext& ctx) {
  const Value* in = ctx.input_value(0);
  if (!in) return ctx.error("input is missing");
  if (in->kind() != Value::Kind::kOptional) return ctx.set_output(0, owned(*in));
  if (!in->has_element()) return ctx.error("the optional input is empty");
  return ctx.set_output(0, owned(in->element()));
}

void add(OpRegistry& r, const char* op, std::initializer_list<int> versions, ShapeRule rule, Kernel kernel) {
  for (int v : versions) r.add(OpDef{"", op, v, rule, kernel, true, true});
}

}  // namespace

void register_sequence_ops(OpRegistry& r) {
  add(r, "SequenceConstruct", {11}, construct_infer, construct_kernel);
  add(r, "SequenceEmpty", {11}, empty_infer, empty_kernel);
  add(r, "SequenceInsert", {11}, same_sequence_infer, insert_kernel);
  add(r, "SequenceErase", {11}, same_sequence_infer, erase_kernel);
  add(r, "SequenceAt", {11}, at_infer, at_kernel);
  add(r, "SequenceLength", {11}, length_infer, length_kernel);
  add(r, "SplitToSequence", {11}, split_infer, split_kernel);
  add(r, "ConcatFromSequence", {11}, concat_infer, concat_kernel);
  add(r, "SequenceMap", {17}, map_infer, map_kernel);
  add(r, "Optional", {15}, optional_infer, optional_kernel);
  add(r, "OptionalHasElement", {15, 18}, has_element_infer, has_element_kernel);
  add(r, "OptionalGetElement", {15, 18}, get_element_infer, get_element_kernel);
}

}  // namespace kiln::ops
