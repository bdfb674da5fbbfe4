// Tests of dead_code_elimination: unread nodes and values go; graph outputs, partially read nodes
// and values subgraphs capture stay.
#include "kiln/passes/dead_code_elimination.h"

#include <gtest/gtest.h>

#include "kiln/ir/printer.h"
#include "kiln/ir/verifier.h"
#include "passes/pass_test_util.h"

namespace kiln::passes {
namespace {

using namespace testing;

TEST(DeadCodeElimination, RemovesUnreadChainsAndTheirConstants) {
  ir::Graph g;
  ir::Value* x = add_input(g, "x", ir::make_type(DType::kFloat, {2}));
  ir::Value* w = add_floats(g, "w", {1, 2});
  ir::Value* d1 = g.add_value("d1");
  ir::Value* d2 = g.add_value("d2");
  ir::Value* y = g.add_value("y");
  g.add_value("orphan");
  g.add_node("Add", {x, w}, {d1}, "dead1");
  g.add_node("Relu", {d1}, {d2}, "dead2");
  g.add_node("Relu", {x}, {y}, "live");
  g.outputs = {y};
  EXPECT_TRUE(changed_ok(eliminate_dead_code(g, fake_context())));
  ASSERT_TRUE(ir::verify(g).is_ok());
  EXPECT_EQ(ir::print_graph(g),
            "graph main (%x: float[2]) -> (%y: undefined) {\n"
            "  %y: undefined = Relu 'live'(%x)\n"
            "}");
  EXPECT_EQ(g.values().size(), 2u);  // x and y
  EXPECT_EQ(g.find_value("w"), nullptr);
}

TEST(DeadCodeElimination, NoChangeWhenEverythingIsRead) {
  ir::Graph g;
  ir::Value* x = add_input(g, "x", ir::make_type(DType::kFloat, {2}));
  ir::Value* unused_input = add_input(g, "unused", ir::make_type(DType::kFloat, {2}));
  ir::Value* a = g.add_value("a");
  ir::Value* mask = g.add_value("mask");  // unread second output of a live node
  ir::Value* y = g.add_value("y");
  g.add_node("Dropout", {x}, {a, mask}, "dropout");
  g.add_node("Relu", {a}, {y}, "relu");
  g.outputs = {y, add_floats(g, "constant_output", {1})};
  const std::string before = ir::print_graph(g);
  EXPECT_FALSE(changed_ok(eliminate_dead_code(g, fake_context())));
  EXPECT_EQ(ir::print_graph(g), before);
  EXPECT_EQ(g.find_value("unused"), unused_input);
  EXPECT_EQ(g.find_value("mask"), mask);
}

TEST(DeadCodeElimination, ValuesCapturedBySubgraphsStay) {
  ir::Graph g;
  ir::Value* x = add_input(g, "x", ir::make_type(DType::kFloat, {2}));
  ir::Value* captured = g.add_value("captured");
  ir::Value* w = add_floats(g, "w", {3, 4});
  ir::Value* y = g.add_value("y");
  g.add_node("Relu", {x}, {captured}, "producer");
  ir::Node* scope = g.add_node("Scope", {x}, {y}, "scope");
  capture_in_subgraph(g, scope, "captured");
  g.outputs = {y};
  auto& body = *scope->attributes["body"].g;
  ir::Value* body_w = body.add_value("w");  // the body reads the outer constant too
  body.add_node("Neg", {body_w}, {body.add_value("w_neg")}, "body_w_neg");
  EXPECT_FALSE(changed_ok(eliminate_dead_code(g, fake_context())));
  EXPECT_EQ(g.nodes().size(), 2u);
  EXPECT_EQ(g.find_value("w"), w);
  EXPECT_EQ(captured->producer, g.nodes()[0].get());
  EXPECT_TRUE(ir::verify(g).is_ok()) << ir::print_graph(g);
}

TEST(DeadCodeElimination, DeadNodeWithSubgraphReleasesWhatOnlyItCaptured) {
  ir::Graph g;
  ir::Value* x = add_input(g, "x", ir::make_type(DType::kFloat, {2}));
  ir::Value* captured = g.add_value("captured");
  ir::Value* unread = g.add_value("unread");
  ir::Value* y = g.add_value("y");
  g.add_node("Relu", {x}, {captured}, "producer");
  ir::Node* scope = g.add_node("Scope", {x}, {unread}, "dead_scope");
  capture_in_subgraph(g, scope, "captured");
  g.add_node("Neg", {x}, {y}, "live");
  g.outputs = {y};
  EXPECT_TRUE(changed_ok(eliminate_dead_code(g, fake_context())));
  ASSERT_EQ(g.nodes().size(), 1u);
  EXPECT_EQ(g.nodes()[0]->name, "live");
  EXPECT_EQ(g.find_value("captured"), nullptr);
}

}  // namespace
}  // namespace kiln::passes
