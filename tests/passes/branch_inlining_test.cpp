// Tests of branch_inlining: an If with a constant condition becomes the nodes of the branch it
// takes (its outputs the If's own values, a branch constant moved along, an enclosing constant's
// copy merged back, a branch value whose name the graph already holds renamed along with the
// reads of nested bodies), and an If whose condition is not constant stays.
#include "kiln/passes/branch_inlining.h"

#include <gtest/gtest.h>

#include "kiln/ir/printer.h"
#include "kiln/ir/verifier.h"
#include "passes/pass_test_util.h"

namespace kiln::passes {
namespace {

using namespace testing;

std::shared_ptr<ir::Graph> branch_of(ir::Graph& g, const std::string& name) { return std::make_shared<ir::Graph>(name, &g); }

// main: t = Neg(x); y = If(cond) then { t = Mul(x, k); z = If(c2) then { Abs(t) } else { Neg(t) } }
// else { x } (an enclosing value as the output), where the then-branch's own value is named `t` like main's, and k (a
// branch constant) equals main's constant k2 only when `copy_of_main_constant`.
struct IfGraph {
  ir::Graph g;
  ir::Value* x = add_input(g, "x", ir::make_type(DType::kFloat, {3}));
  ir::Value* c2 = add_input(g, "c2", ir::make_type(DType::kBool, {}));
  ir::Value* t = g.add_value("t");
  ir::Value* y = g.add_value("y");
  ir::Value* cond = nullptr;
  ir::Node* if_node = nullptr;

  IfGraph(bool condition, bool copy_of_main_constant, bool constant_condition = true) {
    g.add_node("Neg", {x}, {t}, "neg_main");
    add_floats(g, "k", {1, 2, 3});
    cond = constant_condition ? g.add_constant("cond", Tensor::from_vector<bool>(DType::kBool, {}, {condition}))
                              : add_input(g, "cond", ir::make_type(DType::kBool, {}));
    if_node = g.add_node("If", {cond}, {y}, "choose", "", 17);
    auto then_branch = branch_of(g, "then");
    ir::Value* bx = then_branch->add_value("x");
    ir::Value* bk = then_branch->add_constant(
        "k", Tensor::from_vector<float>(DType::kFloat, {3}, copy_of_main_constant ? std::vector<float>{1, 2, 3} : std::vector<float>{4, 5, 6}));
    ir::Value* bt = then_branch->add_value("t");
    ir::Value* bc2 = then_branch->add_value("c2");
    ir::Value* bz = then_branch->add_value("z");
    then_branch->add_node("Mul", {bx, bk}, {bt}, "scale", "", 17);
    ir::Node* inner = then_branch->add_node("If", {bc2}, {bz}, "inner", "", 17);
    for (const auto& [attribute, op] : {std::pair{"then_branch", "Abs"}, std::pair{"else_branch", "Neg"}}) {
      auto body = std::make_shared<ir::Graph>(attribute, then_branch.get());
      ir::Value* read = body->add_value("t");
      ir::Value* out = body->add_value(std::string(attribute) + "_out");
      body->add_node(op, {read}, {out}, op, "", 17);
      body->outputs = {out};
      inner->attributes[attribute] = ir::Attribute::of_graph(body);
    }
    then_branch->outputs = {bz};
    auto else_branch = branch_of(g, "else");
    else_branch->outputs = {else_branch->add_value("x")};
    if_node->attributes["then_branch"] = ir::Attribute::of_graph(then_branch);
    if_node->attributes["else_branch"] = ir::Attribute::of_graph(else_branch);
    g.outputs = {y, t};
  }
};

const ir::Node* node_named(const ir::Graph& g, const std::string& name) {
  for (const auto& n : g.nodes())
    if (n->name == name) return n.get();
  return nullptr;
}

TEST(BranchInlining, TheTakenBranchReplacesTheIfAndItsReadsFollowRenames) {
  IfGraph t(true, false);
  EXPECT_TRUE(changed_ok(inline_constant_branches(t.g, fake_context())));
  ASSERT_TRUE(ir::verify(t.g).is_ok()) << ir::print_graph(t.g);
  EXPECT_EQ(node_named(t.g, "choose"), nullptr);
  const ir::Node* scale = node_named(t.g, "scale");
  const ir::Node* inner = node_named(t.g, "inner");
  ASSERT_TRUE(scale && inner) << ir::print_graph(t.g);
  EXPECT_EQ(scale->inputs[0], t.x);
  EXPECT_NE(scale->inputs[1]->name, "k") << "the branch's own k differs from main's";
  EXPECT_EQ(scale->inputs[1]->initializer->data<float>()[0], 4.0f);
  ASSERT_NE(scale->outputs[0], t.t);
  const std::string renamed = scale->outputs[0]->name;
  EXPECT_NE(renamed, "t");
  EXPECT_EQ(inner->outputs[0], t.y) << "the branch output is the If's own value";
  EXPECT_EQ(inner->inputs[0], t.c2);
  ir::for_each_subgraph(*inner, [&](ir::Graph& body) {
    EXPECT_EQ(body.outer_scope_reads(), std::vector<std::string>{renamed}) << ir::print_graph(body);
    EXPECT_EQ(body.parent(), &t.g);
  });
  EXPECT_EQ(t.g.outputs[1], t.t) << "main's own t is untouched";
}

TEST(BranchInlining, ACopyOfAnEnclosingConstantIsThatConstant) {
  IfGraph t(true, true);
  EXPECT_TRUE(changed_ok(inline_constant_branches(t.g, fake_context())));
  const ir::Node* scale = node_named(t.g, "scale");
  ASSERT_TRUE(scale);
  EXPECT_EQ(scale->inputs[1], t.g.find_value("k"));
}

TEST(BranchInlining, AnOutputTheBranchDoesNotComputeIsCopiedByAnIdentity) {
  IfGraph t(false, false);
  EXPECT_TRUE(changed_ok(inline_constant_branches(t.g, fake_context())));
  ASSERT_TRUE(ir::verify(t.g).is_ok()) << ir::print_graph(t.g);
  ASSERT_TRUE(t.y->producer) << ir::print_graph(t.g);
  EXPECT_EQ(t.y->producer->op_type, "Identity");
  EXPECT_EQ(t.y->producer->inputs[0], t.x);
  EXPECT_EQ(node_named(t.g, "scale"), nullptr) << "the untaken branch is gone";
}

TEST(BranchInlining, AnIfOfUnknownConditionStays) {
  IfGraph t(true, false, false);
  const std::string before = ir::print_graph(t.g);
  EXPECT_FALSE(changed_ok(inline_constant_branches(t.g, fake_context())));
  EXPECT_EQ(ir::print_graph(t.g), before);
}

}  // namespace
}  // namespace kiln::passes
