// A plan's up-front allocations against the memory budget (see plan_memory.h).
#include "kiln/runtime/plan_memory.h"

#include <algorithm>

#include "kiln/ir/memory_budget.h"

namespace kiln::runtime {
namespace {

int64_t slot_bytes(const ValueSlot& slot) {
  return shape_element_count(slot.shape) * static_cast<int64_t>(dtype_size(slot.dtype));
}

bool allocated_up_front(const ValueSlot& slot, const std::vector<Tensor>* targets) {
  return slot.kind == ValueSlot::Kind::kOutput && slot.value->type.has_static_shape() && slot.dtype != DType::kString &&
         !(targets && (*targets)[slot.io_index].defined());
}

// The plan's `count` largest arena and output buffers: "'name' float[1,64,56,56] N bytes (X MiB)".
std::string largest_buffers(const ExecutionPlan& plan, size_t count) {
  std::vector<const ValueSlot*> buffers;
  for (const ValueSlot& slot : plan.slots)
    if (slot.kind == ValueSlot::Kind::kArena || slot.kind == ValueSlot::Kind::kOutput) buffers.push_back(&slot);
  std::sort(buffers.begin(), buffers.end(), [](const ValueSlot* a, const ValueSlot* b) { return slot_bytes(*a) > slot_bytes(*b); });
  std::string text;
  for (size_t i = 0; i < std::min(count, buffers.size()); ++i) {
    const ValueSlot& slot = *buffers[i];
    text += std::string(i ? ", " : "") + "'" + slot.value->name + "' " + dtype_name(slot.dtype) +
            shape_to_string(slot.shape) + " " + describe_bytes(slot_bytes(slot));
  }
  return text;
}

std::string shapes_text(const ExecutionPlan& plan) {
  std::string text;
  for (size_t i = 0; i < plan.input_shapes.size(); ++i) text += (i ? ", " : "") + shape_to_string(plan.input_shapes[i]);
  return text;
}

}  // namespace

int64_t planned_output_bytes(const ExecutionPlan& plan, const std::vector<Tensor>* targets) {
  int64_t bytes = 0;
  for (int s : plan.output_slots) {
    const ValueSlot& slot = plan.slots[static_cast<size_t>(s)];
    if (allocated_up_front(slot, targets)) bytes += slot_bytes(slot);
  }
  return bytes;
}

Status check_plan_fits_budget(const ExecutionPlan& plan, int64_t arena_capacity, const std::vector<Tensor>* targets) {
  const std::shared_ptr<MemoryBudget>& budget = current_memory_budget();
  if (!budget || budget->limit() <= 0) return Status::ok();
  const int64_t arena_growth = std::max<int64_t>(0, plan.memory.arena_bytes - arena_capacity);
  const int64_t outputs = planned_output_bytes(plan, targets);
  // A growing arena is freed before the larger one is taken (Executor::reserve_arena): the run
  // needs only the growth beyond what the executor holds.
  if (arena_growth + outputs <= budget->available()) return Status::ok();
  return allocation_failure("the plan for input shapes " + shapes_text(plan) + " needs " +
                            describe_bytes(plan.memory.arena_bytes + outputs) + " (arena " +
                            describe_bytes(plan.memory.arena_bytes) + ", outputs " + describe_bytes(outputs) +
                            "), beyond what the limit leaves (" + budget->describe() + "); largest buffers: " +
                            largest_buffers(plan, 3));
}

}  // namespace kiln::runtime
