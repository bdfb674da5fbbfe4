// Tests of execution planning's in-place buffers: an op declaring OpDef::in_place_input shares its
// input's arena buffer when nothing reads the input afterwards, and never while it is still read;
// and of late declines: a provider that cannot build a kernel for the plan's shapes hands the node
// to the next provider the policy allows, as evidence, or the plan fails when none is allowed.
#include "kiln/runtime/execution_plan.h"

#include <gtest/gtest.h>

#include "kiln/partition/partitioner.h"
#include "kiln/providers/provider.h"
#include "kiln/providers/registry/provider_registry.h"

namespace kiln::runtime {
namespace {

struct Planned {
  std::unique_ptr<ExecutionPlan> plan;
  int64_t offset(const std::string& value) const {
    for (const ValueSlot& s : plan->slots)
      if (s.value && s.value->name == value) return s.offset;
    return -1;
  }
};

// x[2,6] -> Relu -> a -> Reshape[3,4] -> b -> Relu -> c -> Neg -> y; or, when a is read later,
// c + Reshape(a) -> y
Planned plan_chain(bool reshape_input_read_later) {
  ir::Graph g;
  ir::Value* x = g.add_value("x", ir::make_type(DType::kFloat, {2, 6}));
  ir::Value* shape = g.add_constant("shape", Tensor::from_vector<int64_t>(DType::kInt64, {2}, {3, 4}));
  ir::Value* a = g.add_value("a"), *b = g.add_value("b"), *c = g.add_value("c"), *y = g.add_value("y");
  g.inputs = {x};
  g.add_node("Relu", {x}, {a}, "relu1", "", 14);
  g.add_node("Reshape", {a, shape}, {b}, "reshape", "", 14);
  g.add_node("Relu", {b}, {c}, "relu2", "", 14);
  ir::Value* late = g.add_value("late");
  if (reshape_input_read_later) {
    ir::Value* flat = g.add_constant("flat", Tensor::from_vector<int64_t>(DType::kInt64, {2}, {3, 4}));
    g.add_node("Reshape", {a, flat}, {late}, "reshape_again", "", 14);
    g.add_node("Add", {c, late}, {y}, "add", "", 14);
  } else {
    g.add_node("Neg", {c}, {y}, "neg", "", 13);
  }
  g.outputs = {y};
  auto provider = providers::make_provider("cpu_ref", {target::host_target()});
  EXPECT_TRUE(provider.is_ok());
  const partition::ProviderList providers{provider.value()};
  auto partition = partition::partition_graph(g, partition::FallbackPolicy{{"cpu_ref"}, {}}, providers);
  EXPECT_TRUE(partition.is_ok()) << partition.status().to_string();
  auto plan = build_plan(g, partition.value(), providers, ops::OpRegistry::global(), {{2, 6}});
  EXPECT_TRUE(plan.is_ok()) << plan.status().to_string();
  return {plan.is_ok() ? std::move(plan.value()) : nullptr};
}

TEST(ExecutionPlan, ReshapeTakesItsDeadInputsBuffer) {
  const Planned p = plan_chain(false);
  ASSERT_TRUE(p.plan);
  EXPECT_GE(p.offset("a"), 0);
  EXPECT_EQ(p.offset("a"), p.offset("b"));
  EXPECT_NE(p.offset("b"), p.offset("c"));  // Relu declares no in-place input
}

TEST(ExecutionPlan, InputStillReadLaterKeepsItsOwnBuffer) {
  const Planned p = plan_chain(true);
  ASSERT_TRUE(p.plan);
  EXPECT_NE(p.offset("a"), p.offset("b"));
}

// Takes Relu at partition, but has no kernel for it at any shape (as the cpu provider has none
// where oneDNN offers only reference code).
class FussyProvider final : public providers::Provider {
 public:
  std::string name() const override { return "fussy"; }
  std::vector<std::string> op_types() const override { return {"Relu"}; }
  providers::Capability supports(const ir::Node& node) const override {
    return node.op_type == "Relu" ? providers::Capability::yes() : providers::Capability::no("only Relu");
  }
  Result<ops::Kernel> kernel_for(const ir::Node& node, providers::KernelBuild&) const override {
    return unsupported_target(node.describe() + ": no vector kernel here");
  }
};

Result<std::unique_ptr<ExecutionPlan>> plan_relu(const std::vector<std::string>& fallback) {
  ir::Graph g;
  ir::Value* x = g.add_value("x", ir::make_type(DType::kFloat, {2, 6}));
  ir::Value* y = g.add_value("y");
  g.inputs = {x};
  g.add_node("Relu", {x}, {y}, "relu", "", 14);
  g.outputs = {y};
  const partition::ProviderList providers{std::make_shared<FussyProvider>(),
                                          providers::make_provider("cpu_ref", {target::host_target()}).value()};
  auto partition = partition::partition_graph(g, partition::FallbackPolicy{{"fussy"}, fallback}, providers);
  EXPECT_TRUE(partition.is_ok()) << partition.status().to_string();
  EXPECT_EQ(partition.value().assignments[0].provider, "fussy");
  return build_plan(g, partition.value(), providers, ops::OpRegistry::global(), {{2, 6}});
}

TEST(ExecutionPlan, AKernelItsProviderCannotBuildGoesToAnAllowedFallback) {
  auto plan = plan_relu({"cpu_ref"});
  ASSERT_TRUE(plan.is_ok()) << plan.status().to_string();
  EXPECT_EQ(plan.value()->steps[0].provider, "cpu_ref");
  ASSERT_EQ(plan.value()->late_declines.size(), 1u);
  const auto& late = plan.value()->late_declines[0];
  EXPECT_EQ(late.node, "relu");
  EXPECT_EQ(late.provider, "fussy");
  EXPECT_EQ(late.placed_on, "cpu_ref");
  EXPECT_NE(late.reason.find("no vector kernel"), std::string::npos) << late.reason;
}

TEST(ExecutionPlan, WithoutAFallbackTheKernelsRefusalFailsThePlan) {
  const Status refused = plan_relu({}).status();
  EXPECT_EQ(refused.code(), StatusCode::kUnsupportedTarget);
  EXPECT_NE(refused.message().find("relu"), std::string::npos) << refused.message();
}

}  // namespace
}  // namespace kiln::runtime
