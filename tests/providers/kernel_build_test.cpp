// Tests of a plan's weights packed in place (PlanContext, KernelBuild), through the cpu provider's matmul: the packed
// bytes replace the initializer's plain ones and the product stays right; a later plan that wants
// the weights in another layout reorders them from the packed one; weights that exist only packed
// without a layout to reorder from are refused with UnsupportedTarget naming the node.
#include "kiln/providers/kernel_build.h"

#include <gtest/gtest.h>

#include <cstring>

#include "kiln/partition/partitioner.h"
#include "kiln/providers/provider.h"
#include "kiln/runtime/executor.h"
#include "kiln/providers/registry/provider_registry.h"
#include "support/test_target.h"

namespace kiln::providers {
namespace {

constexpr int64_t kRows = 8, kDepth = 64, kColumns = 128;

// y[8,128] = x[8,64] w'[64,128] on the cpu provider, w stored transposed [128,64] (Gemm transB):
// a layout no target's kernel reads as it is, so every target packs it.
struct Product {
  ir::Graph graph;
  partition::ProviderList providers;
  partition::PartitionMap partition;
  Tensor plain_w = random_tensor(DType::kFloat, {kColumns, kDepth}, 3);

  Product() {
    ir::Value* x = graph.add_value("x", ir::make_type(DType::kFloat, {kRows, kDepth}));
    ir::Value* w = graph.add_constant("w", plain_w.clone());
    ir::Value* y = graph.add_value("y", ir::make_type(DType::kFloat, {kRows, kColumns}));
    graph.inputs = {x};
    graph.outputs = {y};
    graph.add_node("Gemm", {x, w}, {y}, "product", "", 13)->attributes["transB"] = ir::Attribute::of_int(1);
    auto cpu = make_provider("cpu", {kiln::testing::test_target()});
    EXPECT_TRUE(cpu.is_ok());
    providers = {cpu.value()};
    auto placed = partition::partition_graph(graph, partition::FallbackPolicy{{"cpu"}, {}}, providers);
    EXPECT_TRUE(placed.is_ok()) << placed.status().to_string();
    partition = placed.value();
  }

  Result<std::unique_ptr<runtime::ExecutionPlan>> plan(PlanContext context) {
    return runtime::build_plan(graph, partition, providers, ops::OpRegistry::global(), {{kRows, kDepth}}, std::move(context));
  }

  const Tensor& stored_w() { return *graph.find_value("w")->initializer; }
};

// The plan's output for x, checked against x w computed here from the plain weights.
void expect_right_product(const runtime::ExecutionPlan& plan, const Tensor& plain_w) {
  const Tensor x = random_tensor(DType::kFloat, {kRows, kDepth}, 4);
  runtime::Executor executor;
  auto out = executor.run(plan, {Value(x)});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  const Tensor& y = out.value()[0].tensor();
  for (int64_t r = 0; r < kRows; ++r)
    for (int64_t c = 0; c < kColumns; ++c) {
      float want = 0;
      for (int64_t k = 0; k < kDepth; ++k) want += x.data<float>()[r * kDepth + k] * plain_w.data<float>()[c * kDepth + k];
      EXPECT_NEAR(y.data<float>()[r * kColumns + c], want, 1e-4f) << r << "," << c;
    }
}

bool same_bytes(const Tensor& a, const Tensor& b) { return std::memcmp(a.raw_data(), b.raw_data(), a.byte_size()) == 0; }

TEST(KernelBuild, AWeightPackedInPlaceReplacesItsPlainBytesAndAnotherLayoutIsReorderedFromIt) {
  Product p;
  auto ledger = std::make_shared<InPlaceLedger>();
  PlanContext first;
  first.allow_packing_in_place(sole_reader_constants(p.graph), ledger);
  auto plan = p.plan(std::move(first));
  ASSERT_TRUE(plan.is_ok()) << plan.status().to_string();
  ASSERT_EQ(ledger->count("w"), 1u) << "oneDNN keeps 64x128 weights in a layout of the same size";
  const PackedConstant packed = ledger->at("w");
  EXPECT_EQ(packed.data.get(), p.stored_w().raw_data()) << "the packing is the initializer's own storage";
  EXPECT_FALSE(same_bytes(p.stored_w(), p.plain_w)) << "the plain bytes are gone: " << packed.layout;
  expect_right_product(*plan.value(), p.plain_w);

  // A later plan whose kernel wants "another" layout (a name no packing has) reorders from it.
  PackedConstant renamed = packed;
  renamed.layout = "another";
  auto later = p.plan(PlanContext({renamed}, {"w"}));
  ASSERT_TRUE(later.is_ok()) << later.status().to_string();
  expect_right_product(*later.value(), p.plain_w);
}

TEST(KernelBuild, PackedOnlyWeightsWithoutALayoutToReorderFromAreRefused) {
  Product p;
  auto ledger = std::make_shared<InPlaceLedger>();
  PlanContext first;
  first.allow_packing_in_place(sole_reader_constants(p.graph), ledger);
  ASSERT_TRUE(p.plan(std::move(first)).is_ok());
  ASSERT_EQ(ledger->count("w"), 1u);
  PackedConstant artifact_like = ledger->at("w");  // an artifact's: no descriptor
  artifact_like.layout = "another";
  artifact_like.descriptor.reset();
  const Status refused = p.plan(PlanContext({artifact_like}, {"w"})).status();
  EXPECT_EQ(refused.code(), StatusCode::kUnsupportedTarget);
  EXPECT_NE(refused.message().find("product"), std::string::npos) << refused.message();
}

TEST(KernelBuild, OnlyConstantsWithOneReaderMayBePackedInPlace) {
  ir::Graph g;
  ir::Value* x = g.add_value("x", ir::make_type(DType::kFloat, {2, 2}));
  ir::Value* once = g.add_constant("once", random_tensor(DType::kFloat, {2, 2}, 1));
  ir::Value* twice = g.add_constant("twice", random_tensor(DType::kFloat, {2, 2}, 2));
  ir::Value* shown = g.add_constant("shown", random_tensor(DType::kFloat, {2, 2}, 3));
  ir::Value *a = g.add_value("a"), *b = g.add_value("b"), *c = g.add_value("c"), *y = g.add_value("y");
  g.inputs = {x};
  g.add_node("MatMul", {x, once}, {a}, "m1", "", 13);
  g.add_node("MatMul", {a, twice}, {b}, "m2", "", 13);
  g.add_node("MatMul", {b, twice}, {c}, "m3", "", 13);
  g.add_node("MatMul", {c, shown}, {y}, "m4", "", 13);
  g.outputs = {y, shown};
  EXPECT_EQ(sole_reader_constants(g), std::set<std::string>{"once"});
}

}  // namespace
}  // namespace kiln::providers
