// Plan building: specialise shapes, choose kernels, assign slots, plan the arena.
#include "kiln/runtime/execution_plan.h"

#include <algorithm>
#include <set>

#include "kiln/analysis/lifetimes.h"
#include "kiln/analysis/type_inference.h"
#include "kiln/runtime/body_plans.h"
#include "kiln/runtime/concat_in_place.h"

namespace kiln::runtime {

namespace {

Status specialise_inputs(ir::Graph& graph, const std::vector<std::vector<int64_t>>& input_shapes,
                         DeclaredInputs declared) {
  if (input_shapes.size() != graph.inputs.size())
    return invalid_argument("expected " + std::to_string(graph.inputs.size()) + " input shapes, got " +
                            std::to_string(input_shapes.size()));
  for (size_t i = 0; i < graph.inputs.size(); ++i) {
    ir::Value* in = graph.inputs[i];
    if (!in->type.is_tensor()) continue;  // sequences and optionals keep their declared type
    const ir::TensorType concrete{in->type.dtype, ir::Shape::from_static(input_shapes[i])};
    const std::string what = "input '" + in->name + "'";
    if (declared == DeclaredInputs::kHints) {
      auto reconciled = analysis::reconcile_declared(in->type, concrete, what);
      if (!reconciled.is_ok()) return invalid_argument(reconciled.status().message());
      in->type = reconciled.value().type;
      continue;
    }
    auto merged = analysis::merge_types(in->type, concrete, what);
    if (!merged.is_ok()) return invalid_argument(merged.status().message());
    in->type = merged.value();
  }
  return Status::ok();
}

const providers::Provider* provider_named(const partition::ProviderList& providers, const std::string& name) {
  for (const auto& p : providers)
    if (p->name() == name) return p.get();
  return nullptr;
}

// Slot of every graph input, constant and graph output; values produced by nodes get theirs later.
void assign_boundary_slots(const ir::Graph& graph, ExecutionPlan& plan, std::map<const ir::Value*, int>& slot_of) {
  auto add = [&](const ir::Value* v, ValueSlot::Kind kind, size_t io_index) {
    ValueSlot slot;
    slot.kind = kind;
    slot.value = v;
    slot.dtype = v->type.dtype;
    slot.io_index = io_index;
    if (v->type.has_static_shape()) slot.shape = v->type.shape->static_dims();
    if (kind == ValueSlot::Kind::kOutput && (!v->type.has_static_shape() || v->type.dtype == DType::kString))
      ++plan.dynamic_values;
    slot_of[v] = static_cast<int>(plan.slots.size());
    plan.slots.push_back(std::move(slot));
  };
  for (size_t i = 0; i < graph.inputs.size(); ++i) add(graph.inputs[i], ValueSlot::Kind::kInput, i);
  for (const auto& v : graph.values())
    if (v->is_constant()) add(v.get(), ValueSlot::Kind::kConstant, 0);
  for (size_t i = 0; i < graph.outputs.size(); ++i) {
    const ir::Value* v = graph.outputs[i];
    if (!slot_of.count(v)) add(v, ValueSlot::Kind::kOutput, i);
    plan.output_slots.push_back(slot_of[v]);
  }
}

// True when the value's producer is an op whose kernel allocates its own outputs (control flow).
bool produced_by_self_allocating_op(const ir::Value* v, const ops::OpRegistry& registry) {
  if (!v->producer) return false;
  auto def = ops::resolve_op(registry, *v->producer);
  return def.is_ok() && def.value()->kernel_allocates_outputs;
}

// Values that share one arena buffer: an op's output with the input it may overwrite
// (OpDef::in_place_input) when that input is read by nothing after the op. Maps each such output to
// the value whose buffer it takes (chains resolve to the first). Values of Concats in place are left
// out: their buffers hold other values too.
std::map<const ir::Value*, const ir::Value*> in_place_pairs(const ir::Graph& graph, const ops::OpRegistry& registry,
                                                            const std::vector<analysis::Lifetime>& lifetimes,
                                                            const InPlaceConcats& concats) {
  auto in_concat = [&](const ir::Value* v) { return concats.places.count(v) || concats.roots.count(v); };
  std::map<const ir::Value*, int64_t> last_read;
  for (const analysis::Lifetime& life : lifetimes) last_read[life.value] = life.last_step;
  std::map<const ir::Value*, const ir::Value*> owner;
  const auto& nodes = graph.nodes();
  for (size_t step = 0; step < nodes.size(); ++step) {
    const ir::Node& node = *nodes[step];
    auto def = ops::resolve_op(registry, node);
    if (!def.is_ok() || def.value()->in_place_input < 0 || node.outputs.empty() || !node.outputs[0]) continue;
    const ir::Value* in = node.input(static_cast<size_t>(def.value()->in_place_input));
    const ir::Value* out = node.outputs[0];
    const auto read = in ? last_read.find(in) : last_read.end();
    if (read == last_read.end() || read->second != static_cast<int64_t>(step) || !last_read.count(out)) continue;
    if (in_concat(in) || in_concat(out)) continue;
    if (std::count(node.inputs.begin(), node.inputs.end(), in) != 1) continue;
    if (in->type.dtype != out->type.dtype || !in->type.has_static_shape() || !out->type.has_static_shape() ||
        shape_element_count(in->type.shape->static_dims()) != shape_element_count(out->type.shape->static_dims()))
      continue;
    const auto root = owner.find(in);
    owner[out] = root == owner.end() ? in : root->second;
  }
  return owner;
}

// Arena slots for intermediates with static shapes; dynamic slots for the rest. In-place pairs
// share one request spanning both lifetimes; so do the values of Concats in place, each at its
// offset in the request of the value that owns the buffer.
void plan_intermediates(const ir::Graph& graph, const ops::OpRegistry& registry, ExecutionPlan& plan,
                        std::map<const ir::Value*, int>& slot_of) {
  const std::vector<analysis::Lifetime> lifetimes = analysis::compute_lifetimes(graph);
  auto planned = [&](const ir::Value* v) {
    return !slot_of.count(v) && v->type.has_static_shape() && v->type.dtype != DType::kString &&
           v->type.dtype != DType::kUndefined && !produced_by_self_allocating_op(v, registry);
  };
  std::set<const ir::Value*> intermediates;
  for (const analysis::Lifetime& life : lifetimes)
    if (planned(life.value)) intermediates.insert(life.value);
  const InPlaceConcats concats = place_concats_in_place(
      graph, [&](const ir::Value* v) { return intermediates.count(v) > 0; }, memory::kArenaAlignment);
  const std::map<const ir::Value*, const ir::Value*> owner = in_place_pairs(graph, registry, lifetimes, concats);
  std::vector<memory::BufferRequest> requests;
  std::vector<std::vector<std::pair<int, int64_t>>> request_slots;  // the slots each request serves, at byte offsets
  std::map<const ir::Value*, size_t> request_of;
  std::vector<std::pair<int, const analysis::Lifetime*>> in_concat_buffers;  // placed once their owners have requests
  for (const analysis::Lifetime& life : lifetimes) {
    const ir::Value* v = life.value;
    if (slot_of.count(v)) continue;
    ValueSlot slot;
    slot.value = v;
    slot.dtype = v->type.dtype;
    slot.kind = intermediates.count(v) ? ValueSlot::Kind::kArena : ValueSlot::Kind::kDynamic;
    const int index = static_cast<int>(plan.slots.size());
    if (slot.kind == ValueSlot::Kind::kArena) {
      slot.shape = v->type.shape->static_dims();
      const auto shared = owner.find(v);
      const auto request = shared == owner.end() ? request_of.end() : request_of.find(shared->second);
      if (concats.places.count(v)) {
        in_concat_buffers.emplace_back(index, &life);
      } else if (request != request_of.end()) {
        memory::BufferRequest& r = requests[request->second];
        r.first_step = std::min(r.first_step, life.first_step);
        r.last_step = std::max(r.last_step, life.last_step);
        request_slots[request->second].emplace_back(index, 0);
        request_of[v] = request->second;
      } else {
        request_of[v] = requests.size();
        requests.push_back({static_cast<int64_t>(shape_element_count(slot.shape) * dtype_size(slot.dtype)),
                            life.first_step, life.last_step});
        request_slots.push_back({{index, 0}});
      }
    } else {
      ++plan.dynamic_values;
    }
    slot_of[v] = index;
    plan.slots.push_back(std::move(slot));
  }
  for (const auto& [index, life] : in_concat_buffers) {
    const InPlaceConcats::Place& place = concats.places.at(life->value);
    const size_t request = request_of.at(place.root);
    requests[request].first_step = std::min(requests[request].first_step, life->first_step);
    requests[request].last_step = std::max(requests[request].last_step, life->last_step);
    request_slots[request].emplace_back(index, place.byte_offset);
  }
  plan.concats_in_place = concats.elided;
  plan.memory = memory::plan_memory(requests);
  for (size_t i = 0; i < request_slots.size(); ++i)
    for (const auto& [s, offset] : request_slots[i]) plan.slots[static_cast<size_t>(s)].offset = plan.memory.offsets[i] + offset;
}

// The kernel of `node` from `placed` (the partition's provider); when that provider cannot build
// one for the plan's shapes (UnsupportedTarget: no vector kernel there), from the next provider the
// policy allows that supports the node, recorded as a late decline; `provider` names the builder.
Result<ops::Kernel> kernel_by_policy(const ir::Node& node, const providers::Provider& placed,
                                     const partition::PartitionMap& partition, const partition::ProviderList& providers,
                                     ExecutionPlan& plan, providers::KernelBuild& build, std::string& provider) {
  Result<ops::Kernel> kernel = placed.kernel_for(node, build);
  if (kernel.is_ok() || kernel.status().code() != StatusCode::kUnsupportedTarget) return kernel;
  const partition::FallbackPolicy& policy = partition.placement;
  for (const auto* names : {&policy.preferred, &policy.allowed_fallback}) {
    for (const std::string& name : *names) {
      const providers::Provider* other = provider_named(providers, name);
      if (name == placed.name() || !other || !other->supports(node).supported) continue;
      Result<ops::Kernel> taken = other->kernel_for(node, build);
      if (!taken.is_ok()) continue;
      plan.late_declines.push_back({node.name, node.op_type, placed.name(), kernel.status().message(), name});
      provider = name;
      return taken;
    }
  }
  return kernel;
}

Status build_steps(const ir::Graph& graph, const partition::PartitionMap& partition,
                   const partition::ProviderList& providers, const ops::OpRegistry& registry, ExecutionPlan& plan,
                   providers::KernelBuild& build, std::map<const ir::Value*, int>& slot_of) {
  const auto& nodes = graph.nodes();
  if (partition.assignments.size() != nodes.size())
    return internal_error("partition map has " + std::to_string(partition.assignments.size()) +
                          " assignments for " + std::to_string(nodes.size()) + " nodes");
  for (size_t i = 0; i < nodes.size(); ++i) {
    const ir::Node& node = *nodes[i];
    Step step;
    step.node = &node;
    step.provider = partition.assignments[i].provider;
    KILN_ASSIGN_OR_RETURN(step.def, ops::resolve_op(registry, node));
    const providers::Provider* provider = provider_named(providers, step.provider);
    if (!provider) return internal_error("provider '" + step.provider + "' is not loaded");
    KILN_ASSIGN_OR_RETURN(step.kernel, kernel_by_policy(node, *provider, partition, providers, plan, build, step.provider));
    step.self_allocating = step.def->kernel_allocates_outputs;
    step.elided = plan.concats_in_place.count(&node) > 0;
    for (const ir::Value* out : node.outputs)
      if (out && !out->type.is_tensor()) step.self_allocating = true;
    for (const ir::Value* in : node.inputs) {
      if (in && !slot_of.count(in)) return internal_error(node.describe() + " reads '" + in->name + "', which has no slot");
      step.inputs.push_back(in ? slot_of[in] : -1);
    }
    for (const ir::Value* out : node.outputs) {
      const int slot = out ? slot_of[out] : -1;
      step.outputs.push_back(slot);
      if (slot >= 0 && (plan.slots[slot].kind == ValueSlot::Kind::kDynamic ||
                        (plan.slots[slot].kind == ValueSlot::Kind::kOutput && !out->type.has_static_shape())))
        step.dynamic_outputs = true;
      if (slot >= 0 && plan.slots[slot].dtype == DType::kString) step.dynamic_outputs = true;
    }
    for (const std::string& name : ir::names_captured_by(node)) {
      const ir::Value* v = graph.find_value(name);
      if (!v || !slot_of.count(v))
        return internal_error(node.describe() + ": its subgraph reads '" + name + "', which has no slot");
      step.captured.emplace_back(name, slot_of[v]);
    }
    plan.steps.push_back(std::move(step));
  }
  return Status::ok();
}

}  // namespace

Result<std::unique_ptr<ExecutionPlan>> build_plan(const ir::Graph& compiled, const partition::PartitionMap& partition,
                                                  const partition::ProviderList& providers,
                                                  const ops::OpRegistry& registry,
                                                  const std::vector<std::vector<int64_t>>& input_shapes,
                                                  providers::PlanContext context, DeclaredInputs declared) {
  auto plan = std::make_unique<ExecutionPlan>();
  if (!context.body_runner())
    context.set_body_runner(BodyPlans::runner(std::make_shared<BodyPlans>(partition.placement, providers, registry)));
  for (const std::string& value : context.packed_only()) plan->evidence.record_packed_only(value);
  plan->graph = compiled.clone();
  plan->input_shapes = input_shapes;
  KILN_RETURN_IF_ERROR(specialise_inputs(*plan->graph, input_shapes, declared));
  auto inferred = analysis::infer_types(*plan->graph, registry);
  if (!inferred.is_ok()) return inferred.status().with_context("specialising to the given input shapes");
  std::map<const ir::Value*, int> slot_of;
  assign_boundary_slots(*plan->graph, *plan, slot_of);
  plan_intermediates(*plan->graph, registry, *plan, slot_of);
  for (const auto& provider : providers) provider->begin_plan(context);
  providers::KernelBuild build{context, plan->evidence};
  KILN_RETURN_IF_ERROR(build_steps(*plan->graph, partition, providers, registry, *plan, build, slot_of));
  for (const auto& provider : providers) KILN_RETURN_IF_ERROR(provider->finish_plan(build));
  KILN_RETURN_IF_ERROR(providers::check_packed_only_readers(*plan->graph, plan->evidence));
  return plan;
}

std::vector<int> inputs_updated_in_place(const ExecutionPlan& plan) {
  std::vector<int> updated(plan.output_slots.size(), -1);
  for (const Step& step : plan.steps) {
    if (!step.def || step.def->in_place_input < 0 || step.outputs.empty() || step.outputs[0] < 0) continue;
    const auto k = static_cast<size_t>(step.def->in_place_input);
    if (k >= step.inputs.size() || step.inputs[k] < 0) continue;
    const ValueSlot& in = plan.slots[static_cast<size_t>(step.inputs[k])];
    const ValueSlot& out = plan.slots[static_cast<size_t>(step.outputs[0])];
    if (in.kind != ValueSlot::Kind::kInput || out.kind != ValueSlot::Kind::kOutput || in.dtype != out.dtype || in.shape != out.shape)
      continue;
    if (plan.graph->consumers(in.value).size() != 1 || std::count(step.inputs.begin(), step.inputs.end(), step.inputs[k]) != 1) continue;
    updated[out.io_index] = static_cast<int>(in.io_index);
  }
  return updated;
}

}  // namespace kiln::runtime
