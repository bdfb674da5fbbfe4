// Tests of common_subexpression_elimination: equal nodes and equal constants merge; graph outputs,
// random ops, nodes with subgraphs and captured values never do.
#include "kiln/passes/common_subexpression_elimination.h"

#include <gtest/gtest.h>

#include <cmath>

#include "kiln/ir/printer.h"
#include "kiln/ir/verifier.h"
#include "passes/pass_test_util.h"

namespace kiln::passes {
namespace {

using namespace testing;

ir::Node* unary(ir::Graph& g, const std::string& op, ir::Value* in, const std::string& out) {
  return g.add_node(op, {in}, {g.add_value(out)}, out + "_node");
}

TEST(CommonSubexpressionElimination, EqualNodesMergeAndChainsFollow) {
  // y = Add(Neg(Relu(x)), Neg(Relu(x)))  ->  y = Add(n1, n1)
  ir::Graph g;
  ir::Value* x = add_input(g, "x", ir::make_type(DType::kFloat, {2}));
  ir::Value* r1 = unary(g, "Relu", x, "r1")->outputs[0];
  ir::Value* r2 = unary(g, "Relu", x, "r2")->outputs[0];
  ir::Value* n1 = unary(g, "Neg", r1, "n1")->outputs[0];
  ir::Value* n2 = unary(g, "Neg", r2, "n2")->outputs[0];
  ir::Value* y = g.add_value("y");
  g.add_node("Add", {n1, n2}, {y}, "add");
  g.outputs = {y};
  EXPECT_TRUE(changed_ok(eliminate_common_subexpressions(g, fake_context())));
  ASSERT_TRUE(ir::verify(g).is_ok()) << ir::print_graph(g);
  EXPECT_EQ(ir::print_graph(g),
            "graph main (%x: float[2]) -> (%y: undefined) {\n"
            "  %r1: undefined = Relu 'r1_node'(%x)\n"
            "  %n1: undefined = Neg 'n1_node'(%r1)\n"
            "  %y: undefined = Add 'add'(%n1, %n1)\n"
            "}");
}

TEST(CommonSubexpressionElimination, AttributesAreComparedDeeply) {
  ir::Graph g;
  ir::Value* x = add_input(g, "x", ir::make_type(DType::kFloat, {2}));
  std::vector<ir::Value*> leaky_outputs;
  auto leaky = [&](const std::string& name, float alpha, std::vector<int64_t> ints) {
    ir::Node* n = unary(g, "LeakyRelu", x, name);
    n->attributes["alpha"] = ir::Attribute::of_float(alpha);
    n->attributes["extra"] = ir::Attribute::of_tensor(Tensor::from_vector<int64_t>(DType::kInt64, {2}, ints));
    leaky_outputs.push_back(n->outputs[0]);
  };
  leaky("a", 0.1f, {1, 2});
  leaky("b", 0.2f, {1, 2});   // differs in alpha
  leaky("c", 0.1f, {1, 3});   // differs in the tensor attribute
  leaky("d", -0.0f, {1, 2});  // -0.0 differs from 0.0 by bits
  leaky("e", 0.0f, {1, 2});
  leaky("nan1", std::nanf(""), {1, 2});
  leaky("nan2", std::nanf(""), {1, 2});  // equals nan1: NaN attributes compare by bits
  leaky("a_again", 0.1f, {1, 2});        // equals a
  ir::Value* y = g.add_value("y");
  ir::Node* sum = g.add_node("Sum", leaky_outputs, {y}, "sum");
  g.outputs = {y};
  EXPECT_TRUE(changed_ok(eliminate_common_subexpressions(g, fake_context())));
  EXPECT_EQ(g.nodes().size(), 7u);
  std::vector<std::string> read;
  for (const ir::Value* v : sum->inputs) read.push_back(v->name);
  EXPECT_EQ(read, (std::vector<std::string>{"a", "b", "c", "d", "e", "nan1", "nan1", "a"}));
}

TEST(CommonSubexpressionElimination, GraphOutputsAreNotMergedIntoEachOther) {
  ir::Graph g;
  ir::Value* x = add_input(g, "x", ir::make_type(DType::kFloat, {2}));
  ir::Value* y1 = unary(g, "Relu", x, "y1")->outputs[0];
  ir::Value* y2 = unary(g, "Relu", x, "y2")->outputs[0];
  g.outputs = {y1, y2};
  const std::string before = ir::print_graph(g);
  EXPECT_FALSE(changed_ok(eliminate_common_subexpressions(g, fake_context())));
  EXPECT_EQ(ir::print_graph(g), before);
}

TEST(CommonSubexpressionElimination, RandomOpsAndSubgraphNodesAreNeverMerged) {
  ir::Graph g;
  ir::Value* x = add_input(g, "x", ir::make_type(DType::kFloat, {2}));
  ir::Value* r1 = g.add_value("r1");
  ir::Value* r2 = g.add_value("r2");
  g.add_node("RandomNormalLike", {x}, {r1}, "rand1");
  g.add_node("RandomNormalLike", {x}, {r2}, "rand2");
  ir::Node* s1 = unary(g, "Scope", x, "s1");
  ir::Node* s2 = unary(g, "Scope", x, "s2");
  capture_in_subgraph(g, s1, "x");
  s2->attributes = s1->attributes;  // the very same subgraph
  ir::Value* y = g.add_value("y");
  g.add_node("Sum", {r1, r2, s1->outputs[0], s2->outputs[0]}, {y}, "sum");
  g.outputs = {y};
  EXPECT_FALSE(changed_ok(eliminate_common_subexpressions(g, fake_context())));
  EXPECT_EQ(g.nodes().size(), 5u);
}

TEST(CommonSubexpressionElimination, EqualConstantsMergeThenTheirReaders) {
  ir::Graph g;
  ir::Value* x = add_input(g, "x", ir::make_type(DType::kFloat, {2}));
  ir::Value* c1 = add_floats(g, "c1", {1, 2});
  ir::Value* c2 = add_floats(g, "c2", {1, 2});
  ir::Value* c3 = add_floats(g, "c3", {1, 3});
  ir::Value* a1 = g.add_value("a1");
  ir::Value* a2 = g.add_value("a2");
  ir::Value* a3 = g.add_value("a3");
  ir::Value* y = g.add_value("y");
  g.add_node("Add", {x, c1}, {a1}, "add1");
  g.add_node("Add", {x, c2}, {a2}, "add2");
  g.add_node("Add", {x, c3}, {a3}, "add3");
  g.add_node("Sum", {a1, a2, a3}, {y}, "sum");
  g.outputs = {y};
  EXPECT_TRUE(changed_ok(eliminate_common_subexpressions(g, fake_context())));
  ASSERT_TRUE(ir::verify(g).is_ok()) << ir::print_graph(g);
  ASSERT_EQ(g.nodes().size(), 3u) << ir::print_graph(g);
  EXPECT_EQ(g.nodes()[2]->inputs, (std::vector<ir::Value*>{a1, a1, a3}));
  EXPECT_TRUE(g.consumers(c2).empty());
  EXPECT_EQ(g.consumers(c3).size(), 1u);
  // A second run finds nothing more: unread duplicates do not count as changes.
  EXPECT_FALSE(changed_ok(eliminate_common_subexpressions(g, fake_context())));
}

TEST(CommonSubexpressionElimination, CapturedAndOutputConstantsStay) {
  ir::Graph g;
  ir::Value* x = add_input(g, "x", ir::make_type(DType::kFloat, {2}));
  ir::Value* c1 = add_floats(g, "c1", {5, 5});
  ir::Value* captured = add_floats(g, "captured", {5, 5});
  ir::Value* output = add_floats(g, "output", {5, 5});
  ir::Value* a = g.add_value("a");
  ir::Value* s = g.add_value("s");
  g.add_node("Add", {x, c1}, {a}, "add");
  ir::Node* scope = g.add_node("Scope", {captured, output}, {s}, "scope");
  capture_in_subgraph(g, scope, "captured");
  g.outputs = {a, s, output};
  EXPECT_FALSE(changed_ok(eliminate_common_subexpressions(g, fake_context())));
  EXPECT_EQ(scope->inputs, (std::vector<ir::Value*>{captured, output}));
  EXPECT_TRUE(ir::verify(g).is_ok());
}

}  // namespace
}  // namespace kiln::passes
