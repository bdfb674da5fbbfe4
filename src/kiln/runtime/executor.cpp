// Linear execution of a plan over one arena.
#include "kiln/runtime/executor.h"

#include <chrono>
#include <new>

#include "kiln/ops/evaluate.h"

namespace kiln::runtime {

namespace {

// Tensors for every slot that exists before the first step runs.
Status bind_slots(const ExecutionPlan& plan, const std::vector<Tensor>& inputs, std::byte* arena,
                  std::vector<Tensor>& tensors) {
  tensors.assign(plan.slots.size(), Tensor());
  for (size_t i = 0; i < plan.slots.size(); ++i) {
    const ValueSlot& slot = plan.slots[i];
    switch (slot.kind) {
      case ValueSlot::Kind::kInput: tensors[i] = inputs[slot.io_index]; break;
      case ValueSlot::Kind::kConstant: tensors[i] = *slot.value->initializer; break;
      case ValueSlot::Kind::kArena: tensors[i] = Tensor::view(slot.dtype, slot.shape, arena + slot.offset); break;
      case ValueSlot::Kind::kOutput:
        if (slot.value->type.has_static_shape() && slot.dtype != DType::kString) {
          tensors[i] = Tensor::allocate(slot.dtype, slot.shape);
          if (!tensors[i].defined())
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
Status allocate_dynamic_outputs(const Step& step, const std::vector<const Tensor*>& in, std::vector<Tensor>& tensors) {
  KILN_ASSIGN_OR_RETURN(std::vector<ir::TensorType> types, ops::infer_concrete_outputs(*step.def, *step.node, in));
  for (size_t k = 0; k < step.outputs.size(); ++k) {
    if (step.outputs[k] < 0) continue;
    Tensor& t = tensors[step.outputs[k]];
    const std::vector<int64_t> shape = types[k].shape->static_dims();
    if (t.defined() && t.dtype() == types[k].dtype && t.shape() == shape) continue;
    t = Tensor::allocate(types[k].dtype, shape);
    if (!t.defined())
      return allocation_failure(step.node->describe() + ": cannot allocate output " + std::to_string(k) + " of type " +
                                types[k].to_string());
  }
  return Status::ok();
}

Status run_step(const Step& step, std::vector<Tensor>& tensors) {
  std::vector<const Tensor*> in;
  in.reserve(step.inputs.size());
  for (int s : step.inputs) in.push_back(s >= 0 ? &tensors[s] : nullptr);
  const bool self_allocating = step.def->kernel_allocates_outputs;
  if (step.dynamic_outputs && !self_allocating) KILN_RETURN_IF_ERROR(allocate_dynamic_outputs(step, in, tensors));
  std::vector<Tensor*> out;
  out.reserve(step.outputs.size());
  for (int s : step.outputs) out.push_back(s >= 0 ? &tensors[s] : nullptr);
  ops::ValueScope scope;
  for (const auto& [name, slot] : step.captured) scope[name] = &tensors[slot];
  ops::KernelContext ctx(*step.node, std::move(in), std::move(out), &scope);
  KILN_RETURN_IF_ERROR(step.kernel(ctx));
  if (self_allocating)
    for (size_t k = 0; k < step.outputs.size(); ++k)
      if (step.outputs[k] >= 0 && !tensors[step.outputs[k]].defined())
        return internal_error(step.node->describe() + ": kernel gave no value for output " + std::to_string(k));
  return Status::ok();
}

}  // namespace

Status Executor::ensure_arena(int64_t bytes) {
  if (bytes <= arena_bytes_) return Status::ok();
  void* p = ::operator new(static_cast<size_t>(bytes), std::align_val_t{64}, std::nothrow);
  if (!p) return allocation_failure("cannot allocate an arena of " + std::to_string(bytes) + " bytes");
  arena_ = std::shared_ptr<void>(p, [](void* q) { ::operator delete(q, std::align_val_t{64}); });
  arena_bytes_ = bytes;
  return Status::ok();
}

Result<std::vector<Tensor>> Executor::run(const ExecutionPlan& plan, const std::vector<Tensor>& inputs,
                                          std::vector<StepTiming>* timings) {
  KILN_RETURN_IF_ERROR(ensure_arena(plan.memory.arena_bytes));
  std::vector<Tensor> tensors;
  KILN_RETURN_IF_ERROR(bind_slots(plan, inputs, static_cast<std::byte*>(arena_.get()), tensors));
  for (const Step& step : plan.steps) {
    const auto start = std::chrono::steady_clock::now();
    KILN_RETURN_IF_ERROR(run_step(step, tensors));
    if (timings) {
      const std::chrono::duration<double, std::milli> elapsed = std::chrono::steady_clock::now() - start;
      timings->push_back({step.node, elapsed.count()});
    }
  }
  std::vector<Tensor> outputs;
  for (int s : plan.output_slots) {
    const ValueSlot& slot = plan.slots[s];
    // Outputs that alias an input, a constant or another output are copied so the caller owns them.
    const bool owned = slot.kind == ValueSlot::Kind::kOutput || slot.kind == ValueSlot::Kind::kDynamic;
    outputs.push_back(owned ? tensors[s] : tensors[s].clone());
  }
  for (size_t i = 0; i < outputs.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (plan.output_slots[i] == plan.output_slots[j]) outputs[i] = outputs[i].clone();
  return outputs;
}

}  // namespace kiln::runtime
