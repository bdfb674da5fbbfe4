// Tests of the IR: graph editing, topological order, verifier and printer.
#include <gtest/gtest.h>

#include "kiln/ir/graph.h"
#include "kiln/ir/printer.h"
#include "kiln/ir/verifier.h"

namespace kiln::ir {
namespace {

TEST(Graph, TopologicalSortOrdersProducersFirst) {
  Graph g;
  Value* x = g.add_value("x", make_type(DType::kFloat, {2}));
  Value* a = g.add_value("a");
  Value* b = g.add_value("b");
  g.inputs = {x};
  g.add_node("Relu", {a}, {b}, "second");
  g.add_node("Neg", {x}, {a}, "first");
  g.outputs = {b};
  EXPECT_FALSE(verify(g).is_ok());
  ASSERT_TRUE(g.topological_sort().is_ok());
  EXPECT_EQ(g.nodes()[0]->name, "first");
  EXPECT_TRUE(verify(g).is_ok());
}

// The If reads `r` only by name, two subgraphs down: the sort still places it after r's producer.
TEST(Graph, TopologicalSortOrdersProducersOfCapturedValuesFirst) {
  Graph g;
  Value* x = g.add_value("x", make_type(DType::kFloat, {2}));
  Value* c = g.add_value("c", make_type(DType::kBool, {}));
  Value* a = g.add_value("a");
  Value* r = g.add_value("r");
  Value* y = g.add_value("y");
  g.inputs = {x, c};
  Node* reader = g.add_node("If", {c}, {y}, "reader");
  g.add_node("Abs", {x}, {a}, "abs");
  g.add_node("Neg", {a}, {r}, "neg");
  g.outputs = {y};
  auto branch = std::make_shared<Graph>("branch", &g);
  auto inner = std::make_shared<Graph>("inner", branch.get());
  Value* inner_out = inner->add_value("inner_out");
  inner->add_node("Identity", {inner->add_value("r")}, {inner_out});
  inner->outputs = {inner_out};
  Value* branch_out = branch->add_value("branch_out");
  Node* nested = branch->add_node("If", {branch->add_value("c")}, {branch_out}, "nested");
  nested->attributes["then_branch"] = Attribute::of_graph(inner);
  branch->outputs = {branch_out};
  reader->attributes["then_branch"] = Attribute::of_graph(branch);
  EXPECT_FALSE(verify(g).is_ok());
  ASSERT_TRUE(g.topological_sort().is_ok());
  EXPECT_EQ(g.nodes().back()->name, "reader");
  EXPECT_TRUE(verify(g).is_ok()) << verify(g).to_string();
}

TEST(Graph, CycleIsInvalidModel) {
  Graph g;
  Value* a = g.add_value("a");
  Value* b = g.add_value("b");
  g.add_node("Relu", {a}, {b}, "r1");
  g.add_node("Relu", {b}, {a}, "r2");
  g.outputs = {b};
  Status s = g.topological_sort();
  EXPECT_EQ(s.code(), StatusCode::kInvalidModel);
  EXPECT_NE(s.message().find("cycle"), std::string::npos);
}

TEST(Graph, DanglingInputNamesNodeAndValue) {
  Graph g;
  Value* ghost = g.add_value("ghost");
  Value* y = g.add_value("y");
  g.add_node("Relu", {ghost}, {y}, "relu0");
  g.outputs = {y};
  Status s = verify(g);
  EXPECT_EQ(s.code(), StatusCode::kInvalidModel);
  EXPECT_NE(s.message().find("relu0"), std::string::npos);
  EXPECT_NE(s.message().find("ghost"), std::string::npos);
}

TEST(Graph, TwoProducersRejected) {
  Graph g;
  Value* x = g.add_value("x");
  Value* y = g.add_value("y");
  g.inputs = {x};
  g.add_node("Relu", {x}, {y}, "p1");
  g.add_node("Neg", {x}, {y}, "p2");
  g.outputs = {y};
  Status s = verify(g);
  EXPECT_EQ(s.code(), StatusCode::kInvalidModel);
}

TEST(Graph, ConstantTypeMismatchRejected) {
  Graph g;
  Value* c = g.add_constant("c", Tensor::allocate(DType::kFloat, {2}));
  c->type = make_type(DType::kInt64, {2});
  g.outputs = {c};
  EXPECT_EQ(verify(g).code(), StatusCode::kInvalidModel);
}

TEST(Graph, ReplaceAllUsesAndClone) {
  Graph g;
  Value* x = g.add_value("x", make_type(DType::kFloat, {2}));
  Value* a = g.add_value("a");
  Value* y = g.add_value("y");
  g.inputs = {x};
  Node* id = g.add_node("Identity", {x}, {a}, "id");
  g.add_node("Relu", {a}, {y}, "relu");
  g.outputs = {y};
  g.replace_all_uses(a, x);
  g.remove_node(id);
  g.remove_unused_values();
  EXPECT_EQ(g.find_value("a"), nullptr);
  auto copy = g.clone();
  ASSERT_EQ(copy->nodes().size(), 1u);
  EXPECT_EQ(copy->nodes()[0]->inputs[0], copy->find_value("x"));
  EXPECT_NE(copy->find_value("x"), x);
}

TEST(Printer, ShowsTypesAttributesAndSymbols) {
  Graph g;
  Value* x = g.add_value("x", TensorType{DType::kFloat, Shape({Dim::symbol("N"), Dim(3)})});
  Value* y = g.add_value("y", TensorType{DType::kFloat, Shape({Dim::symbol("N"), Dim(3)})});
  g.inputs = {x};
  Node* n = g.add_node("LeakyRelu", {x}, {y}, "lr");
  n->attributes["alpha"] = Attribute::of_float(0.5f);
  g.outputs = {y};
  const std::string text = print_graph(g);
  EXPECT_NE(text.find("%x: float[N,3]"), std::string::npos) << text;
  EXPECT_NE(text.find("LeakyRelu 'lr'(%x) {alpha=0.5}"), std::string::npos) << text;
}

TEST(Tensor, AllocateCloneReshape) {
  Tensor t = Tensor::from_vector<float>(DType::kFloat, {2, 2}, {1, 2, 3, 4});
  Tensor c = t.clone();
  t.data<float>()[0] = 9;
  EXPECT_EQ(c.data<float>()[0], 1);
  EXPECT_EQ(c.reshaped({4}).shape(), std::vector<int64_t>({4}));
  EXPECT_FALSE(c.reshaped({3}).defined());
  EXPECT_FALSE(Tensor::allocate(DType::kFloat, {-1}).defined());
  Tensor s = Tensor::allocate(DType::kString, {2});
  s.data<std::string>()[1] = "hi";
  EXPECT_EQ(s.clone().data<std::string>()[1], "hi");
}

}  // namespace
}  // namespace kiln::ir
