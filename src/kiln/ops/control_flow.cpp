// Control flow: If, Loop and Scan. Their bodies run through the context's body runner, once per
// branch or iteration: run_subgraph node by node on cpu_ref, plans of the policy's providers on
// cpu. Output shapes depend on the branch taken or the trip count, so their kernels allocate their
// outputs (OpDef::kernel_allocates_outputs) and the rules give what the bodies declare.
#include <algorithm>
#include <limits>

#include "kiln/ops/run_limits.h"
#include "kiln/ops/data_movement.h"
#include "kiln/ops/op_families.h"
#include "kiln/ops/op_helpers.h"
#include "kiln/ops/op_registry.h"
#include "kiln/ops/subgraph_runner.h"

namespace kiln::ops {

namespace {

// ---- slicing along an axis and stacking slices (Scan, Loop scan outputs) ----

// x[..., t, ...] along `axis` (the axis removed).
Tensor take_along(const Tensor& x, int64_t axis, int64_t t) {
  std::vector<int64_t> shape = x.shape();
  const int64_t length = shape[axis];
  const int64_t outer = dims_product(shape, 0, axis), inner = dims_product(shape, axis + 1, shape.size());
  shape.erase(shape.begin() + axis);
  Tensor out = Tensor::allocate(x.dtype(), shape);
  for (int64_t o = 0; o < outer; ++o) copy_elements(x, (o * length + t) * inner, out, o * inner, inner);
  return out;
}

// Stacks equally shaped `slices` along a new `axis`.
Result<Tensor> stack_along(const std::vector<Tensor>& slices, int64_t axis, const ir::Node& node) {
  if (slices.empty()) return invalid_argument(node.describe() + ": nothing to stack (zero iterations)");
  std::vector<int64_t> shape = slices[0].shape();
  for (const Tensor& s : slices)
    if (s.shape() != shape || s.dtype() != slices[0].dtype())
      return invalid_argument(node.describe() + ": scan output slices differ in shape or type across iterations (" +
                              shape_to_string(shape) + " vs " + shape_to_string(s.shape()) + ")");
  const auto rank = static_cast<int64_t>(shape.size());
  if (axis < 0) axis += rank + 1;
  if (axis < 0 || axis > rank) return invalid_model(node.describe() + ": scan output axis out of range");
  const int64_t outer = dims_product(shape, 0, axis), inner = dims_product(shape, axis, shape.size());
  const auto length = static_cast<int64_t>(slices.size());
  shape.insert(shape.begin() + axis, length);
  Tensor out = Tensor::allocate(slices[0].dtype(), shape);
  for (int64_t t = 0; t < length; ++t)
    for (int64_t o = 0; o < outer; ++o) copy_elements(slices[t], o * inner, out, (o * length + t) * inner, inner);
  return out;
}

// ---- If ----

Status if_infer(InferenceContext& ctx) {
  KILN_ASSIGN_OR_RETURN(const ir::Graph* then_branch, subgraph_attribute(ctx.node(), "then_branch"));
  KILN_ASSIGN_OR_RETURN(const ir::Graph* else_branch, subgraph_attribute(ctx.node(), "else_branch"));
  if (then_branch->outputs.size() != ctx.output_count() || else_branch->outputs.size() != ctx.output_count())
    return ctx.error("both branches must produce " + std::to_string(ctx.output_count()) + " outputs");
  // A condition known here (computed from shapes a plan pins) picks the branch whose types hold.
  const Tensor* cond = ctx.input_value(0);
  if (cond && cond->dtype() == DType::kBool && cond->element_count() == 1) {
    const ir::Graph* taken = cond->data<bool>()[0] ? then_branch : else_branch;
    for (size_t i = 0; i < ctx.output_count(); ++i) ctx.set_output_type(i, taken->outputs[i]->type);
    return Status::ok();
  }
  // Where the branches disagree, known only at run time: the rank when theirs agree, each dim they
  // agree on.
  for (size_t i = 0; i < ctx.output_count(); ++i)
    ctx.set_output_type(i, ir::unite(then_branch->outputs[i]->type, else_branch->outputs[i]->type));
  return Status::ok();
}

Status if_kernel(KernelContext& ctx) {
  const Tensor* cond = ctx.input(0);
  if (!cond || cond->dtype() != DType::kBool || cond->element_count() != 1)
    return ctx.error("cond must be a single bool");
  const bool take_then = cond->data<bool>()[0];
  KILN_ASSIGN_OR_RETURN(const ir::Graph* branch, subgraph_attribute(ctx.node(), take_then ? "then_branch" : "else_branch"));
  KILN_ASSIGN_OR_RETURN(std::vector<Value> results, ctx.run_body(*branch, {}));
  for (size_t i = 0; i < ctx.output_count(); ++i) KILN_RETURN_IF_ERROR(ctx.set_output(i, std::move(results[i])));
  return Status::ok();
}

// ---- Loop ----

// Loop's inputs: M (optional trip count), cond (optional), then N loop-carried values. The body
// takes (iteration, cond, carried...) and gives (cond, carried..., scan outputs...).
Status loop_infer(InferenceContext& ctx) {
  KILN_ASSIGN_OR_RETURN(const ir::Graph* body, subgraph_attribute(ctx.node(), "body"));
  const size_t carried = ctx.input_count() < 2 ? 0 : ctx.input_count() - 2;
  if (body->inputs.size() != carried + 2 || body->outputs.size() != ctx.output_count() + 1 ||
      ctx.output_count() < carried)
    return ctx.error("body must take 2 + " + std::to_string(carried) + " inputs and give 1 + " +
                     std::to_string(ctx.output_count()) + " outputs");
  for (size_t i = 0; i < ctx.output_count(); ++i) {
    ir::TensorType t = body->outputs[i + 1]->type;
    if (i < carried) {
      // Zero iterations give the value it enters with; each iteration, what the body gives.
      if (ctx.has_input(i + 2)) t = ir::unite(t, ctx.input_type(i + 2));
    } else if (t.shape) {
      t.shape->dims().insert(t.shape->dims().begin(), ir::Dim::unknown());  // one slice per iteration
    }
    ctx.set_output_type(i, t);
  }
  return Status::ok();
}

// A body's result, its error (a failed node, a cancelled run) naming the node and the iteration.
Result<std::vector<Value>> in_iteration(const KernelContext& ctx, int64_t iteration, Result<std::vector<Value>> result) {
  if (result.is_ok()) return result;
  return result.status().with_context(ctx.node().describe() + ", iteration " + std::to_string(iteration));
}

Result<int64_t> optional_trip_count(const KernelContext& ctx) {
  const Tensor* m = ctx.input(0);
  if (!m) return std::numeric_limits<int64_t>::max();
  KILN_ASSIGN_OR_RETURN(auto values, read_int64s(*m, "M"));
  if (values.size() != 1) return ctx.error("M must be a scalar");
  return values[0];
}

Status loop_kernel(KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(const ir::Graph* body, subgraph_attribute(ctx.node(), "body"));
  KILN_ASSIGN_OR_RETURN(const int64_t trip_count, optional_trip_count(ctx));
  bool cond = true;
  if (const Tensor* c = ctx.input(1)) {
    if (c->dtype() != DType::kBool || c->element_count() != 1) return ctx.error("cond must be a single bool");
    cond = c->data<bool>()[0];
  }
  const size_t carried = ctx.input_count() - 2;
  std::vector<Value> state;
  for (size_t i = 0; i < carried; ++i) {
    if (ctx.input_value(i + 2)) state.push_back(*ctx.input_value(i + 2));
    else if (ctx.input(i + 2)) state.push_back(*ctx.input(i + 2));
    else return ctx.error("loop-carried input " + std::to_string(i) + " is missing");
  }
  const size_t scans = ctx.output_count() - carried;
  std::vector<std::vector<Tensor>> scan_slices(scans);
  const int64_t bound = max_loop_iterations();
  auto refuse = [&](const std::string& why) {
    return invalid_argument(ctx.node().describe() + ": " + why + ", above this session's bound of " + std::to_string(bound) +
                            " iterations per Loop (SessionOptions::max_loop_iterations, --max-loop-iterations)");
  };
  if (bound > 0 && !ctx.input(1) && ctx.input(0) && trip_count > bound)
    return refuse("its trip count M is " + std::to_string(trip_count));
  for (int64_t i = 0; i < trip_count && cond; ++i) {
    KILN_RETURN_IF_ERROR(check_run_limits(ctx.node(), i));
    if (bound > 0 && i == bound) return refuse("it would run more than " + std::to_string(bound) + " iterations");
    std::vector<Value> body_inputs = {Tensor::from_vector<int64_t>(DType::kInt64, {}, {i}),
                                      Tensor::from_vector<bool>(DType::kBool, {}, {cond})};
    body_inputs.insert(body_inputs.end(), state.begin(), state.end());
    KILN_ASSIGN_OR_RETURN(std::vector<Value> out, in_iteration(ctx, i, ctx.run_body(*body, body_inputs)));
    const Tensor& cond_out = out[0].tensor();
    if (!out[0].is_tensor() || cond_out.dtype() != DType::kBool || cond_out.element_count() != 1)
      return ctx.error("body's cond output must be a single bool");
    cond = cond_out.data<bool>()[0];
    for (size_t k = 0; k < carried; ++k) state[k] = out[k + 1];
    for (size_t k = 0; k < scans; ++k) {
      if (!out[carried + 1 + k].is_tensor()) return ctx.error("scan outputs must be tensors");
      scan_slices[k].push_back(out[carried + 1 + k].tensor());
    }
  }
  for (size_t k = 0; k < carried; ++k) KILN_RETURN_IF_ERROR(ctx.set_output(k, owned(state[k])));
  for (size_t k = 0; k < scans; ++k) {
    Tensor* o = ctx.output(carried + k);
    if (!o) continue;
    if (scan_slices[k].empty()) {
      const ir::TensorType& t = body->outputs[carried + 1 + k]->type;
      std::vector<int64_t> shape = {0};
      if (t.has_static_shape())
        for (int64_t d : t.shape->static_dims()) shape.push_back(d);
      *o = Tensor::allocate(t.dtype, shape);
      continue;
    }
    KILN_ASSIGN_OR_RETURN(*o, stack_along(scan_slices[k], 0, ctx.node()));
  }
  return Status::ok();
}

// ---- Scan ----

struct ScanLayout {
  size_t states = 0;        // N
  size_t scan_inputs = 0;   // M
  size_t scan_outputs = 0;  // K
  std::vector<int64_t> input_axes, input_directions, output_axes, output_directions;
};

Result<ScanLayout> scan_layout(const ir::Node& node, size_t data_inputs, size_t outputs) {
  ScanLayout l;
  l.scan_inputs = static_cast<size_t>(node.attr_int("num_scan_inputs", 0));
  if (l.scan_inputs == 0 || l.scan_inputs > data_inputs)
    return invalid_model(node.describe() + ": num_scan_inputs must be in [1, " + std::to_string(data_inputs) + "]");
  l.states = data_inputs - l.scan_inputs;
  if (outputs < l.states) return invalid_model(node.describe() + ": fewer outputs than loop states");
  l.scan_outputs = outputs - l.states;
  const bool v8 = node.opset_version < 9;
  l.input_axes = node.attr_ints("scan_input_axes", std::vector<int64_t>(l.scan_inputs, 0));
  l.input_directions = node.attr_ints(v8 ? "directions" : "scan_input_directions", std::vector<int64_t>(l.scan_inputs, 0));
  l.output_axes = node.attr_ints("scan_output_axes", std::vector<int64_t>(l.scan_outputs, 0));
  l.output_directions = node.attr_ints("scan_output_directions", std::vector<int64_t>(l.scan_outputs, 0));
  if (l.input_axes.size() != l.scan_inputs || l.input_directions.size() != l.scan_inputs ||
      l.output_axes.size() != l.scan_outputs || l.output_directions.size() != l.scan_outputs)
    return invalid_model(node.describe() + ": scan axis/direction lists do not match the scan inputs and outputs");
  return l;
}

// One Scan over `states` and `scan_inputs` (no batch dim): the opset-9 semantics.
Status scan_once(const ir::Graph& body, const ScanLayout& l, std::vector<Tensor> states,
                 const std::vector<Tensor>& scan_inputs, const KernelContext& ctx, std::vector<Tensor>& results) {
  std::vector<int64_t> axes;
  int64_t length = -1;
  for (size_t j = 0; j < l.scan_inputs; ++j) {
    KILN_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(l.input_axes[j], scan_inputs[j].rank(), "scan_input_axes"));
    const int64_t len = scan_inputs[j].shape()[axis];
    if (length >= 0 && len != length) return ctx.error("scan inputs have different sequence lengths");
    length = len;
    axes.push_back(axis);
  }
  std::vector<std::vector<Tensor>> slices(l.scan_outputs);
  for (int64_t t = 0; t < length; ++t) {
    KILN_RETURN_IF_ERROR(check_run_limits(ctx.node(), t));
    std::vector<Value> body_inputs(states.begin(), states.end());
    for (size_t j = 0; j < l.scan_inputs; ++j)
      body_inputs.push_back(take_along(scan_inputs[j], axes[j], l.input_directions[j] ? length - 1 - t : t));
    KILN_ASSIGN_OR_RETURN(std::vector<Value> out, in_iteration(ctx, t, ctx.run_body(body, body_inputs)));
    for (const Value& v : out)
      if (!v.is_tensor()) return ctx.error("Scan bodies must produce tensors");
    for (size_t k = 0; k < l.states; ++k) states[k] = out[k].tensor();
    for (size_t k = 0; k < l.scan_outputs; ++k) slices[k].push_back(out[l.states + k].tensor());
  }
  results = states;
  for (size_t k = 0; k < l.scan_outputs; ++k) {
    if (l.output_directions[k]) std::reverse(slices[k].begin(), slices[k].end());
    if (slices[k].empty()) return ctx.error("scan over an empty sequence has no output slices");
    KILN_ASSIGN_OR_RETURN(Tensor stacked, stack_along(slices[k], l.output_axes[k], ctx.node()));
    results.push_back(std::move(stacked));
  }
  return Status::ok();
}

Status scan_infer(InferenceContext& ctx) {
  KILN_ASSIGN_OR_RETURN(const ir::Graph* body, subgraph_attribute(ctx.node(), "body"));
  const size_t first = ctx.opset() < 9 ? 1 : 0;  // Scan-8 starts with sequence_lens
  KILN_ASSIGN_OR_RETURN(ScanLayout l, scan_layout(ctx.node(), ctx.input_count() - first, ctx.output_count()));
  if (body->outputs.size() != ctx.output_count()) return ctx.error("body outputs do not match the node's outputs");
  for (size_t i = 0; i < ctx.output_count(); ++i) {
    ir::TensorType t = body->outputs[i]->type;
    if (i < l.states && ctx.has_input(first + i)) t = ctx.input_type(first + i);
    else t.shape.reset();  // gains the sequence axis (and the batch axis in Scan-8)
    ctx.set_output_type(i, t);
  }
  return Status::ok();
}

Status scan_kernel(KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(const ir::Graph* body, subgraph_attribute(ctx.node(), "body"));
  const bool v8 = ctx.opset() < 9;
  const size_t first = v8 ? 1 : 0;
  KILN_ASSIGN_OR_RETURN(ScanLayout l, scan_layout(ctx.node(), ctx.input_count() - first, ctx.output_count()));
  std::vector<Tensor> inputs;
  for (size_t i = first; i < ctx.input_count(); ++i) {
    if (!ctx.input(i)) return ctx.error("input " + std::to_string(i) + " is missing");
    inputs.push_back(*ctx.input(i));
  }
  if (v8 && ctx.input(0)) {
    // sequence_lens: only full-length sequences are supported.
    KILN_ASSIGN_OR_RETURN(auto lens, read_int64s(*ctx.input(0), "sequence_lens"));
    for (int64_t len : lens)
      if (len != inputs[l.states].shape()[1]) return unsupported_operator(ctx.node().describe() + ": Scan-8 with sequence_lens shorter than the sequence is not supported");
  }
  std::vector<Tensor> results;
  if (!v8) {
    KILN_RETURN_IF_ERROR(scan_once(*body, l, {inputs.begin(), inputs.begin() + l.states},
                                   {inputs.begin() + l.states, inputs.end()}, ctx, results));
  } else {
    // Scan-8: dim 0 of every input is a batch; scan each batch item, then stack along dim 0.
    const int64_t batch = inputs[0].shape().empty() ? 0 : inputs[0].shape()[0];
    std::vector<std::vector<Tensor>> per_output(ctx.output_count());
    for (int64_t b = 0; b < batch; ++b) {
      std::vector<Tensor> item;
      for (const Tensor& x : inputs) item.push_back(take_along(x, 0, b));
      std::vector<Tensor> out;
      KILN_RETURN_IF_ERROR(scan_once(*body, l, {item.begin(), item.begin() + l.states},
                                     {item.begin() + l.states, item.end()}, ctx, out));
      for (size_t k = 0; k < out.size(); ++k) per_output[k].push_back(std::move(out[k]));
    }
    for (auto& slices : per_output) {
      KILN_ASSIGN_OR_RETURN(Tensor stacked, stack_along(slices, 0, ctx.node()));
      results.push_back(std::move(stacked));
    }
  }
  for (size_t i = 0; i < ctx.output_count(); ++i) KILN_RETURN_IF_ERROR(ctx.set_output(i, owned(results[i])));
  return Status::ok();
}

}  // namespace

void register_control_flow_ops(OpRegistry& r) {
  for (int v : {1, 11, 13, 16, 19, 21}) r.add(OpDef{"", "If", v, if_infer, if_kernel, true, true});
  for (int v : {1, 11, 13, 16, 19, 21}) r.add(OpDef{"", "Loop", v, loop_infer, loop_kernel, true, true});
  for (int v : {8, 9, 11, 16, 19, 21}) r.add(OpDef{"", "Scan", v, scan_infer, scan_kernel, true});
}

}  // namespace kiln::ops
