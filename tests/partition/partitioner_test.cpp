// Tests of the partitioner and fallback policy, with a fake provider that declines some ops.
#include <gtest/gtest.h>

#include <set>

#include "kiln/partition/partitioner.h"
#include "kiln/providers/registry/provider_registry.h"

namespace kiln::partition {
namespace {

// Takes every op except the ones listed, with a reason.
class PickyProvider final : public providers::Provider {
 public:
  PickyProvider(std::string name, std::set<std::string> declined) : name_(std::move(name)), declined_(std::move(declined)) {}
  std::string name() const override { return name_; }
  std::vector<std::string> op_types() const override { return {}; }  // not listed: the partitioner never asks
  providers::Capability supports(const ir::Node& node) const override {
    if (declined_.count(node.op_type)) return providers::Capability::no("no kernel for " + node.op_type);
    return providers::Capability::yes();
  }
  Result<ops::Kernel> kernel_for(const ir::Node&, providers::KernelBuild&) const override { return ops::Kernel(); }

 private:
  std::string name_;
  std::set<std::string> declined_;
};

struct Fixture {
  ir::Graph graph;
  Fixture() {
    ir::Value* x = graph.add_value("x", ir::make_type(DType::kFloat, {2}));
    ir::Value* a = graph.add_value("a");
    ir::Value* b = graph.add_value("b");
    ir::Value* c = graph.add_value("c");
    graph.inputs = {x};
    graph.add_node("Relu", {x}, {a}, "relu");
    graph.add_node("Erf", {a}, {b}, "erf");
    graph.add_node("Neg", {b}, {c}, "neg");
    graph.outputs = {c};
  }
};

ProviderList providers_list() {
  return {std::make_shared<PickyProvider>("fast", std::set<std::string>{"Erf"}),
          std::make_shared<PickyProvider>("ref", std::set<std::string>{})};
}

TEST(Partitioner, FailClosedByDefaultNamesNodeReasonAndHint) {
  Fixture f;
  auto result = partition_graph(f.graph, FallbackPolicy{{"fast"}, {}}, providers_list());
  ASSERT_FALSE(result.is_ok());
  EXPECT_EQ(result.status().code(), StatusCode::kUnsupportedOperator);
  const std::string& m = result.status().message();
  EXPECT_NE(m.find("Erf 'erf'"), std::string::npos) << m;
  EXPECT_NE(m.find("no kernel for Erf"), std::string::npos) << m;
  EXPECT_NE(m.find("--allow-fallback ref"), std::string::npos) << m;
}

TEST(Partitioner, AllowedFallbackIsRecordedWithReason) {
  Fixture f;
  auto result = partition_graph(f.graph, FallbackPolicy{{"fast"}, {"ref"}}, providers_list());
  ASSERT_TRUE(result.is_ok()) << result.status().to_string();
  const PartitionMap& map = result.value();
  ASSERT_EQ(map.assignments.size(), 3u);
  EXPECT_EQ(map.assignments[0].provider, "fast");
  EXPECT_EQ(map.assignments[1].provider, "ref");
  EXPECT_TRUE(map.assignments[1].fallback);
  ASSERT_EQ(map.assignments[1].declined.size(), 1u);
  EXPECT_EQ(map.assignments[1].declined[0].reason, "no kernel for Erf");
  EXPECT_EQ(map.fallback_nodes, 1);
  EXPECT_NEAR(map.fallback_share(), 1.0 / 3.0, 1e-12);
  ASSERT_EQ(map.partitions.size(), 3u);  // fast | ref | fast
  EXPECT_EQ(map.boundary_edges, 2);
}

TEST(Partitioner, PreferenceOrderWins) {
  Fixture f;
  auto result = partition_graph(f.graph, FallbackPolicy{{"ref", "fast"}, {}}, providers_list());
  ASSERT_TRUE(result.is_ok());
  for (const auto& a : result.value().assignments) EXPECT_EQ(a.provider, "ref");
  EXPECT_EQ(result.value().partitions.size(), 1u);
  EXPECT_EQ(result.value().boundary_edges, 0);
}

TEST(Partitioner, UnknownProviderInPolicyIsInvalidArgument) {
  Fixture f;
  auto result = partition_graph(f.graph, FallbackPolicy{{"gpu"}, {}}, providers_list());
  EXPECT_EQ(result.status().code(), StatusCode::kInvalidArgument);
}

TEST(Partitioner, UnknownProviderNameFromFactory) {
  auto p = providers::make_provider("tpu", {target::host_target()});
  EXPECT_EQ(p.status().code(), StatusCode::kUnsupportedTarget);
  EXPECT_NE(p.status().message().find("cpu_ref"), std::string::npos);
}

}  // namespace
}  // namespace kiln::partition
