// Control-flow bodies compiled and planned under the session's policy (see body_plans.h).
#include "kiln/runtime/body_plans.h"

#include "kiln/ir/value_type.h"

namespace kiln::runtime {

Result<BodyPlans::Compiled*> BodyPlans::compiled(const ir::Graph& body, const ops::ValueScope& scope) {
  auto it = bodies_.find(&body);
  if (it != bodies_.end()) return &it->second;
  Compiled c;
  c.graph = body.clone();
  for (const std::string& name : body.outer_scope_reads()) {
    ir::Value* v = c.graph->find_value(name);
    const ir::Value* enclosing = body.parent() ? body.parent()->find_value_in_scope(name) : nullptr;
    if (enclosing && enclosing->is_constant()) {
      // The same bytes every run: the body's own constant (shared, not copied), which kernels pack once.
      if (!v) v = c.graph->add_value(name, enclosing->type);  // read only by a nested body: held for it
      v->initializer = *enclosing->initializer;
      v->type = enclosing->type;
      continue;
    }
    const auto found = scope.find(name);
    if (found == scope.end() || !found->second)
      return invalid_model("subgraph '" + body.name() + "' reads '" + name + "', which has no value in its scope");
    // Read only by a nested body: this graph holds it for them.
    if (!v) v = c.graph->add_value(name, ir::type_of(*found->second));
    c.graph->inputs.push_back(v);
    c.captured.push_back(name);
  }
  if (compiler_) {
    KILN_ASSIGN_OR_RETURN(c.placed, compiler_(*c.graph));
  } else {
    KILN_ASSIGN_OR_RETURN(c.placed, partition::partition_graph(*c.graph, policy_, providers_));
  }
  return &bodies_.emplace(&body, std::move(c)).first->second;
}

Result<std::vector<Value>> BodyPlans::run(const ir::Graph& body, const std::vector<Value>& inputs, const ops::ValueScope& scope) {
  std::shared_ptr<Planned> planned;  // held: a later run may evict it from plans_
  std::vector<Value> bound = inputs;
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    Result<Compiled*> found = compiled(body, scope);
    if (!found.is_ok()) return found.status().with_context("subgraph '" + body.name() + "'");
    Compiled* c = found.value();
    for (const std::string& name : c->captured) bound.push_back(*scope.at(name));
    if (bound.size() != c->graph->inputs.size())
      return invalid_argument("subgraph '" + body.name() + "' takes " + std::to_string(body.inputs.size()) + " inputs, got " +
                              std::to_string(inputs.size()));
    std::vector<std::vector<int64_t>> shapes;
    for (const Value& v : bound) shapes.push_back(v.is_tensor() ? v.tensor().shape() : std::vector<int64_t>{});
    auto key = std::make_pair(&body, shapes);
    auto it = plans_.find(key);
    if (it == plans_.end()) {
      size_t kept = 0;
      for (auto p = plans_.lower_bound({&body, {}}); p != plans_.end() && p->first.first == &body; ++p) ++kept;
      if (kept >= kMaxPlansPerBody) plans_.erase(plans_.lower_bound({&body, {}}));
      providers::PlanContext context;
      context.set_body_runner(runner(std::make_shared<BodyPlans>(policy_, providers_, registry_, compiler_)));
      auto plan = build_plan(*c->graph, c->placed, providers_, registry_, shapes, std::move(context), DeclaredInputs::kHints);
      if (!plan.is_ok()) return plan.status().with_context("subgraph '" + body.name() + "'");
      auto entry = std::make_shared<Planned>();
      entry->plan = std::move(plan).value();
      it = plans_.emplace(std::move(key), std::move(entry)).first;
    }
    planned = it->second;
  }
  return planned->executor.run(*planned->plan, bound);
}

ops::SubgraphRunner BodyPlans::runner(std::shared_ptr<BodyPlans> plans) {
  return [plans](const ir::Graph& body, const std::vector<Value>& inputs, const ops::ValueScope& scope) {
    return plans->run(body, inputs, scope);
  };
}

}  // namespace kiln::runtime
