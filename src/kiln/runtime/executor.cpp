// Linear execution of a plan over one arena.
#include "kiln/runtime/executor.h"

#include <chrono>
#include <cstring>
#include <map>
#include <new>
#include <optional>

#include "kiln/ir/buffer.h"
#include "kiln/ir/memory_budget.h"
#include "kiln/ops/evaluate.h"
#include "kiln/ops/subgraph_runner.h"
#include "kiln/runtime/plan_memory.h"

namespace kiln::runtime {

namespace {

Status target_mismatch(const std::string& output, const Tensor& target, DType dtype, const std::vector<int64_t>& shape) {
  return invalid_argument("output '" + output + "' is " + dtype_name(dtype) + shape_to_string(shape) +
                          " in this run, but the buffer bound to it is " + dtype_name(target.dtype()) +
                          shape_to_string(target.shape()));
}

// Values for every slot that exists before the first step runs: an output slot of static shape is
// its target when it has one (checked), else a new tensor.
Status bind_slots(const ExecutionPlan& plan, const std::vector<Value>& inputs, std::byte* arena,
                  std::vector<Tensor>* targets, std::vector<Value>& values) {
  values.assign(plan.slots.size(), Value());
  for (size_t i = 0; i < plan.slots.size(); ++i) {
    const ValueSlot& slot = plan.slots[i];
    switch (slot.kind) {
      case ValueSlot::Kind::kInput: values[i] = inputs[slot.io_index]; break;
      case ValueSlot::Kind::kConstant: values[i] = *slot.value->initializer; break;
      case ValueSlot::Kind::kArena: values[i] = Tensor::view(slot.dtype, slot.shape, arena + slot.offset); break;
      case ValueSlot::Kind::kOutput:
        if (slot.value->type.has_static_shape() && slot.dtype != DType::kString) {
          Tensor* target = targets ? &(*targets)[slot.io_index] : nullptr;
          if (target && target->defined()) {
            if (target->dtype() != slot.dtype || target->shape() != slot.shape)
              return target_mismatch(slot.value->name, *target, slot.dtype, slot.shape);
            values[i] = *target;
            break;
          }
          values[i] = Tensor::allocate(slot.dtype, slot.shape);
          if (!values[i].tensor().defined())
            return allocation_failure("cannot allocate output '" + slot.value->name + "' of shape " +
                                      shape_to_string(slot.shape));
        }
        break;
      case ValueSlot::Kind::kDynamic: break;
    }
  }
  return Status::ok();
}

// Allocates the outputs of a step whose shapes are only known now, from its real inputs.
Status allocate_dynamic_outputs(const Step& step, const std::vector<const Value*>& in, std::vector<Value>& values) {
  std::vector<const Tensor*> tensors;
  for (const Value* v : in) tensors.push_back(v ? &v->tensor() : nullptr);
  KILN_ASSIGN_OR_RETURN(std::vector<ir::TensorType> types, ops::infer_concrete_outputs(*step.def, *step.node, tensors));
  for (size_t k = 0; k < step.outputs.size(); ++k) {
    if (step.outputs[k] < 0) continue;
    Tensor t = Tensor::allocate(types[k].dtype, types[k].shape->static_dims());
    if (!t.defined())
      return allocation_failure(step.node->describe() + ": cannot allocate output " + std::to_string(k) + " of type " +
                                types[k].to_string());
    values[step.outputs[k]] = std::move(t);
  }
  return Status::ok();
}

Status run_kernel(const Step& step, std::vector<Value>& values) {
  std::vector<const Value*> in;
  in.reserve(step.inputs.size());
  for (int s : step.inputs) in.push_back(s >= 0 ? &values[s] : nullptr);
  if (step.self_allocating) {
    for (int s : step.outputs)
      if (s >= 0) values[s] = Value();
  } else if (step.dynamic_outputs) {
    KILN_RETURN_IF_ERROR(allocate_dynamic_outputs(step, in, values));
  }
  std::vector<Value*> out;
  out.reserve(step.outputs.size());
  for (int s : step.outputs) out.push_back(s >= 0 ? &values[s] : nullptr);
  ops::ValueScope scope;
  for (const auto& [name, slot] : step.captured) scope[name] = &values[slot];
  ops::KernelContext ctx(*step.node, std::move(in), std::move(out), &scope);
  KILN_RETURN_IF_ERROR(step.kernel(ctx));
  if (step.self_allocating)
    for (int s : step.outputs)
      if (s >= 0 && values[s].is_tensor() && !values[s].tensor().defined())
        return internal_error(step.node->describe() + ": kernel gave no value for an output");
  return Status::ok();
}

// A step; memory it cannot have (the OS's or the session's budget) is an AllocationFailure naming
// the node.
Status run_step(const Step& step, std::vector<Value>& values) {
  if (step.elided) return Status::ok();
  try {
    return run_kernel(step, values);
  } catch (const std::bad_alloc&) {
    return allocation_failure(step.node->describe() + ": out of memory");
  }
}

using Clock = std::chrono::steady_clock;
using Ms = std::chrono::duration<double, std::milli>;

// Where a timed run's steps go: the outermost timed run's timings, its start, and the entries of
// body steps already made (by enclosing step and body step), which later calls add to.
struct TimedRun {
  std::vector<StepTiming>* timings;
  Clock::time_point start;
  std::map<std::pair<const ir::Node*, const ir::Node*>, size_t>* body_entries;
};

// The timed step whose kernel runs on this thread: the runs of its bodies record their steps here.
struct BodySink {
  TimedRun run;
  int depth;               // of the body steps recorded here
  const ir::Node* parent;  // the step running the bodies
  double ms = 0;           // the recorded steps' time: the parent's body_ms
};
thread_local BodySink* current_body_sink = nullptr;

// Makes `sink` current on this thread for its lifetime (null: none).
class ScopedBodySink {
 public:
  explicit ScopedBodySink(BodySink* sink) : previous_(current_body_sink) { current_body_sink = sink; }
  ~ScopedBodySink() { current_body_sink = previous_; }
  ScopedBodySink(const ScopedBodySink&) = delete;
  ScopedBodySink& operator=(const ScopedBodySink&) = delete;

 private:
  BodySink* previous_;
};

// Records a step that ran from `start` to `end`, its bodies' steps taking `body_ms` of it: an
// entry of its own in a timed run, added to its entry under its enclosing step in a body's run.
void record_step(const ExecutionPlan& plan, const Step& step, const TimedRun& run, BodySink* enclosing, Clock::time_point start,
                 Clock::time_point end, double body_ms) {
  const double ms = Ms(end - start).count();
  if (!enclosing) {
    run.timings->push_back({step.node, &step.provider, Ms(start - run.start).count(), ms, body_ms, 1, 0, nullptr, nullptr});
    return;
  }
  enclosing->ms += ms;
  const auto [entry, made] = run.body_entries->try_emplace({enclosing->parent, step.node}, run.timings->size());
  if (made) {
    run.timings->push_back({step.node, &step.provider, Ms(start - run.start).count(), ms, body_ms, 1, enclosing->depth,
                            enclosing->parent, plan.weak_from_this().lock()});
    return;
  }
  StepTiming& t = (*run.timings)[entry->second];
  t.ms += ms;
  t.body_ms += body_ms;
  t.calls += 1;
}

}  // namespace

Status Executor::reserve_arena(int64_t bytes) {
  if (bytes <= arena_bytes_) return Status::ok();
  arena_.reset();  // freed first: the old arena and the new one are never held at once
  arena_bytes_ = 0;
  arena_ = allocate_buffer(static_cast<size_t>(bytes));
  if (!arena_) return allocation_failure("cannot allocate an arena of " + describe_bytes(bytes));
  arena_bytes_ = bytes;
  return Status::ok();
}

Result<std::vector<Value>> Executor::run(const ExecutionPlan& plan, const std::vector<Value>& inputs,
                                         std::vector<StepTiming>* timings, const StepObserver& observer,
                                         const ops::RunLimits* limits, std::vector<Tensor>* output_targets) {
  const ops::ScopedRunLimits current(limits);
  KILN_RETURN_IF_ERROR(check_plan_fits_budget(plan, arena_bytes_, output_targets));
  KILN_RETURN_IF_ERROR(reserve_arena(plan.memory.arena_bytes));
  std::vector<Value> values;
  KILN_RETURN_IF_ERROR(bind_slots(plan, inputs, static_cast<std::byte*>(arena_.get()), output_targets, values));
  std::map<std::pair<const ir::Node*, const ir::Node*>, size_t> body_entries;
  BodySink* const enclosing = timings ? nullptr : current_body_sink;
  std::optional<TimedRun> timed;
  if (timings) timed = TimedRun{timings, Clock::now(), &body_entries};
  else if (enclosing) timed = enclosing->run;
  for (const Step& step : plan.steps) {
    KILN_RETURN_IF_ERROR(ops::check_run_limits(*step.node));
    const auto start = Clock::now();
    BodySink sink{timed ? *timed : TimedRun{}, enclosing ? enclosing->depth + 1 : 1, step.node};
    {
      const ScopedBodySink current(timed ? &sink : nullptr);
      KILN_RETURN_IF_ERROR(run_step(step, values));
    }
    if (observer) observer(step, values);
    if (timed) record_step(plan, step, *timed, enclosing, start, Clock::now(), sink.ms);
  }
  // Outputs that alias an input, a constant, the arena or another output are copied so the caller
  // owns each one (into its target, when it has one).
  std::vector<Value> outputs;
  for (size_t i = 0; i < plan.output_slots.size(); ++i) {
    const int s = plan.output_slots[i];
    const ValueSlot::Kind kind = plan.slots[s].kind;
    Tensor* target = output_targets && (*output_targets)[i].defined() ? &(*output_targets)[i] : nullptr;
    if (target && values[s].is_tensor() && values[s].tensor().raw_data() != target->raw_data()) {
      const Tensor& value = values[s].tensor();
      if (value.dtype() != target->dtype() || value.shape() != target->shape() || value.dtype() == DType::kString)
        return target_mismatch(plan.slots[s].value->name, *target, value.dtype(), value.shape());
      std::memcpy(target->raw_data(), value.raw_data(), value.byte_size());
    }
    if (target) {
      outputs.push_back(*target);
      continue;
    }
    bool shared = kind != ValueSlot::Kind::kOutput && kind != ValueSlot::Kind::kDynamic;
    for (size_t j = 0; j < i; ++j) shared = shared || plan.output_slots[j] == s;
    outputs.push_back(shared && values[s].is_tensor() ? Value(values[s].tensor().clone()) : ops::owned(values[s]));
  }
  return outputs;
}

}  // namespace kiln::runtime
