// Tests of constant_folding, run alone on small graphs with the fake op registry.
#include "kiln/passes/constant_folding.h"

#include <gtest/gtest.h>

#include "kiln/ir/printer.h"
#include "kiln/ir/verifier.h"
#include "passes/pass_test_util.h"

namespace kiln::passes {
namespace {

using namespace testing;

TEST(ConstantFolding, FoldsAChainOfConstantNodesInOneRun) {
  ir::Graph g;
  ir::Value* x = add_input(g, "x", ir::make_type(DType::kFloat, {2}));
  ir::Value* c1 = add_floats(g, "c1", {1, 2});
  ir::Value* c2 = add_floats(g, "c2", {10, 20});
  ir::Value* a = g.add_value("a", ir::make_type(DType::kFloat, {2}));
  ir::Value* b = g.add_value("b", ir::make_type(DType::kFloat, {2}));
  ir::Value* y = g.add_value("y", ir::make_type(DType::kFloat, {2}));
  g.add_node("Add", {c1, c2}, {a}, "add_a");
  g.add_node("Add", {a, c1}, {b}, "add_b");
  g.add_node("Add", {b, x}, {y}, "add_y");
  g.outputs = {y};

  Result<bool> changed = fold_constants(g, fake_context());
  ASSERT_TRUE(changed.is_ok()) << changed.status().to_string();
  EXPECT_TRUE(*changed);
  ASSERT_TRUE(ir::verify(g).is_ok()) << ir::print_graph(g);
  ASSERT_EQ(g.nodes().size(), 1u);
  EXPECT_EQ(g.nodes()[0]->name, "add_y");
  // a = c1 + c2 = [11, 22]; b = a + c1 = [12, 24] (by hand).
  EXPECT_EQ(floats_of(a), (std::vector<float>{11, 22}));
  EXPECT_EQ(floats_of(b), (std::vector<float>{12, 24}));
  EXPECT_EQ(a->producer, nullptr);
  EXPECT_NE(ir::print_graph(g).find("%b = constant float[2] [12.0,24.0]"), std::string::npos) << ir::print_graph(g);
}

TEST(ConstantFolding, NoChangeWhenAnInputIsNotConstant) {
  ir::Graph g;
  ir::Value* x = add_input(g, "x", ir::make_type(DType::kFloat, {2}));
  ir::Value* y = g.add_value("y", ir::make_type(DType::kFloat, {2}));
  g.add_node("Add", {x, add_floats(g, "c", {1, 1})}, {y}, "add");
  g.outputs = {y};
  const std::string before = ir::print_graph(g);
  Result<bool> changed = fold_constants(g, fake_context());
  ASSERT_TRUE(changed.is_ok());
  EXPECT_FALSE(*changed);
  EXPECT_EQ(ir::print_graph(g), before);
}

TEST(ConstantFolding, FoldedGraphOutputKeepsItsName) {
  ir::Graph g;
  ir::Value* y = g.add_value("y", ir::make_type(DType::kFloat, {1}));
  g.add_node("Add", {add_floats(g, "c1", {1}), add_floats(g, "c2", {2})}, {y}, "add");
  g.outputs = {y};
  ASSERT_TRUE(changed_ok(fold_constants(g, fake_context())));
  ASSERT_EQ(g.outputs.size(), 1u);
  EXPECT_EQ(g.outputs[0], y);
  EXPECT_EQ(g.outputs[0]->name, "y");
  EXPECT_EQ(floats_of(y), (std::vector<float>{3}));
  EXPECT_TRUE(ir::verify(g).is_ok());
}

TEST(ConstantFolding, LeavesRandomSubgraphAndUnknownOps) {
  ir::Graph g;
  ir::Value* c = add_floats(g, "c", {1, 2});
  ir::Value* r = g.add_value("r");
  ir::Value* s = g.add_value("s");
  ir::Value* u = g.add_value("u");
  g.add_node("RandomNormal", {}, {r}, "random");
  ir::Node* with_body = g.add_node("Add", {c, c}, {s}, "with_body");
  capture_in_subgraph(g, with_body, "c");
  g.add_node("NotRegistered", {c}, {u}, "unknown");
  g.outputs = {r, s, u};
  Result<bool> changed = fold_constants(g, fake_context());
  ASSERT_TRUE(changed.is_ok()) << changed.status().to_string();
  EXPECT_FALSE(*changed);
  EXPECT_EQ(g.nodes().size(), 3u);
}

TEST(ConstantFolding, ResultsOverTheSizeLimitStayUnfolded) {
  auto build = [](ir::Graph& g) {
    ir::Value* out = g.add_value("ones");
    g.add_node("Fill", {add_int64s(g, "shape", {16, 16})}, {out}, "fill");  // 256 floats = 1024 bytes
    g.outputs = {out};
  };
  ir::Graph small_limit;
  build(small_limit);
  PassContext ctx = fake_context();
  ctx.max_folded_bytes = 1023;
  EXPECT_FALSE(changed_ok(fold_constants(small_limit, ctx)));
  EXPECT_EQ(small_limit.nodes().size(), 1u);

  ir::Graph at_limit;
  build(at_limit);
  ctx.max_folded_bytes = 1024;
  EXPECT_TRUE(changed_ok(fold_constants(at_limit, ctx)));
  EXPECT_EQ(at_limit.find_value("ones")->initializer->shape(), (std::vector<int64_t>{16, 16}));
}

TEST(ConstantFolding, KernelErrorIsReportedNamingTheNode) {
  ir::Graph g;
  ir::Value* y = g.add_value("y");
  g.add_node("Fail", {add_floats(g, "c", {1})}, {y}, "broken_node");
  g.outputs = {y};
  Result<bool> changed = fold_constants(g, fake_context());
  ASSERT_FALSE(changed.is_ok());
  EXPECT_EQ(changed.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(changed.status().message().find("constant folding Fail 'broken_node'"), std::string::npos)
      << changed.status().message();
  EXPECT_NE(changed.status().message().find("boom"), std::string::npos);
}

TEST(ConstantFolding, UnsupportedKernelLeavesTheNodeForPartitioning) {
  ir::Graph g;
  ir::Value* y = g.add_value("y");
  g.add_node("Unsupported", {add_floats(g, "c", {1})}, {y}, "later");
  g.outputs = {y};
  Result<bool> changed = fold_constants(g, fake_context());
  ASSERT_TRUE(changed.is_ok()) << changed.status().to_string();
  EXPECT_FALSE(*changed);
  EXPECT_EQ(g.nodes().size(), 1u);
}

TEST(ConstantFolding, ValueCapturedBySubgraphKeepsItsNameAsAConstant) {
  ir::Graph g;
  ir::Value* x = add_input(g, "x", ir::make_type(DType::kFloat, {1}));
  ir::Value* a = g.add_value("a", ir::make_type(DType::kFloat, {1}));
  ir::Value* y = g.add_value("y");
  g.add_node("Add", {add_floats(g, "c1", {1}), add_floats(g, "c2", {2})}, {a}, "add");
  ir::Node* user = g.add_node("Scope", {x}, {y}, "scope");
  capture_in_subgraph(g, user, "a");
  g.outputs = {y};
  ASSERT_TRUE(changed_ok(fold_constants(g, fake_context())));
  EXPECT_EQ(g.find_value("a"), a);
  EXPECT_TRUE(a->is_constant());
  EXPECT_EQ(g.consumers(a), std::vector<ir::Node*>{user});
  EXPECT_TRUE(ir::verify(g).is_ok()) << ir::print_graph(g);
}

}  // namespace
}  // namespace kiln::passes
