// Tests of identity_elimination: bypassing Identity and inference Dropout while keeping graph
// output names and subgraph captures intact.
#include "kiln/passes/identity_elimination.h"

#include <gtest/gtest.h>

#include <map>

#include "kiln/ir/printer.h"
#include "kiln/ir/verifier.h"
#include "passes/pass_test_util.h"

namespace kiln::passes {
namespace {

using namespace testing;

// x -> Relu -> a -> <op> -> b -> Neg -> y
struct PassThroughGraph {
  ir::Graph g;
  ir::Value* x = add_input(g, "x", ir::make_type(DType::kFloat, {2}));
  ir::Value* a = g.add_value("a");
  ir::Value* b = g.add_value("b");
  ir::Value* y = g.add_value("y");
  ir::Node* pass_through = nullptr;

  explicit PassThroughGraph(const std::string& op, int opset = 13) {
    g.add_node("Relu", {x}, {a}, "relu");
    pass_through = g.add_node(op, {a}, {b}, "pass", "", opset);
    g.add_node("Neg", {b}, {y}, "neg");
    g.outputs = {y};
  }
};

TEST(IdentityElimination, ReadersOfIdentityReadItsInput) {
  PassThroughGraph t("Identity");
  EXPECT_TRUE(changed_ok(eliminate_identities(t.g, fake_context())));
  ASSERT_TRUE(ir::verify(t.g).is_ok()) << ir::print_graph(t.g);
  ASSERT_EQ(t.g.nodes().size(), 2u);
  EXPECT_EQ(t.g.nodes()[1]->inputs[0], t.a);
  EXPECT_EQ(ir::print_graph(t.g),
            "graph main (%x: float[2]) -> (%y: undefined) {\n"
            "  %a: undefined = Relu 'relu'(%x)\n"
            "  %y: undefined = Neg 'neg'(%a)\n"
            "}");
}

TEST(IdentityElimination, NoChangeWithoutPassThroughNodes) {
  PassThroughGraph t("Relu");
  const std::string before = ir::print_graph(t.g);
  EXPECT_FALSE(changed_ok(eliminate_identities(t.g, fake_context())));
  EXPECT_EQ(ir::print_graph(t.g), before);
}

TEST(IdentityElimination, InferenceDropoutIsRemoved) {
  PassThroughGraph no_training_input("Dropout", 13);
  EXPECT_TRUE(changed_ok(eliminate_identities(no_training_input.g, fake_context())));
  EXPECT_EQ(no_training_input.g.nodes().size(), 2u);

  PassThroughGraph opset10("Dropout", 10);
  EXPECT_TRUE(changed_ok(eliminate_identities(opset10.g, fake_context())));

  PassThroughGraph constant_false("Dropout", 13);
  ir::Value* ratio = add_floats(constant_false.g, "ratio", {0.5f});
  ir::Value* no = constant_false.g.add_constant("no", Tensor::from_vector<bool>(DType::kBool, {}, {false}));
  constant_false.pass_through->inputs = {constant_false.a, ratio, no};
  EXPECT_TRUE(changed_ok(eliminate_identities(constant_false.g, fake_context())));
  EXPECT_EQ(constant_false.g.nodes().size(), 2u);
}

TEST(IdentityElimination, DropoutOfRatioZeroIsRemovedEvenInTrainingMode) {
  // torch's F.dropout(x, p=0.0) without training=False, as torchvision's Swin attention exports it.
  PassThroughGraph t("Dropout", 13);
  ir::Value* yes = t.g.add_constant("yes", Tensor::from_vector<bool>(DType::kBool, {}, {true}));
  ir::Value* zero = t.g.add_constant("zero", Tensor::from_vector<float>(DType::kFloat, {}, {0.0f}));
  t.pass_through->inputs = {t.a, zero, yes};
  EXPECT_TRUE(changed_ok(eliminate_identities(t.g, fake_context())));
  EXPECT_EQ(t.g.nodes().size(), 2u);
}

// x -> Relu -> a -> <op>(a[, shape]) -> b -> Neg -> y, every value typed float[2, 3] but b (given).
struct TypedPassThrough {
  ir::Graph g;
  ir::Value* x = add_input(g, "x", ir::make_type(DType::kFloat, {2, 3}));
  ir::Value* a = g.add_value("a");
  ir::Value* b = g.add_value("b");
  ir::Value* y = g.add_value("y");

  // `shape`: the int64 constant input 1 (Reshape, Expand), when not empty.
  TypedPassThrough(const std::string& op, std::vector<int64_t> shape, ir::TensorType b_type,
                   std::map<std::string, ir::Attribute> attrs = {}) {
    a->type = ir::make_type(DType::kFloat, {2, 3});
    b->type = std::move(b_type);
    g.add_node("Relu", {x}, {a}, "relu");
    std::vector<ir::Value*> inputs = {a};
    if (!shape.empty()) inputs.push_back(add_int64s(g, "shape", shape));
    ir::Node* n = g.add_node(op, inputs, {b}, "pass");
    for (auto& [k, v] : attrs) n->attributes[k] = v;
    g.add_node("Neg", {b}, {y}, "neg");
    g.outputs = {y};
  }
};

TEST(IdentityElimination, CastsAndReshapesThatChangeNothingAreRemoved) {
  TypedPassThrough cast("Cast", {}, ir::make_type(DType::kFloat, {2, 3}), {{"to", ir::Attribute::of_int(1)}});
  EXPECT_TRUE(changed_ok(eliminate_identities(cast.g, fake_context())));
  EXPECT_EQ(cast.g.nodes().size(), 2u);

  TypedPassThrough reshape("Reshape", {2, 3}, ir::make_type(DType::kFloat, {2, 3}));
  EXPECT_TRUE(changed_ok(eliminate_identities(reshape.g, fake_context())));
  EXPECT_EQ(reshape.g.nodes().size(), 2u);

  TypedPassThrough expand("Expand", {1, 3}, ir::make_type(DType::kFloat, {2, 3}));
  EXPECT_TRUE(changed_ok(eliminate_identities(expand.g, fake_context())));
  EXPECT_EQ(expand.g.nodes().size(), 2u);
}

TEST(IdentityElimination, CastsAndReshapesThatChangeSomethingOrAreUnknownStay) {
  TypedPassThrough to_double("Cast", {}, ir::make_type(DType::kDouble, {2, 3}), {{"to", ir::Attribute::of_int(11)}});
  EXPECT_FALSE(changed_ok(eliminate_identities(to_double.g, fake_context())));

  TypedPassThrough reshaped("Reshape", {3, 2}, ir::make_type(DType::kFloat, {3, 2}));
  EXPECT_FALSE(changed_ok(eliminate_identities(reshaped.g, fake_context())));

  TypedPassThrough grown("Expand", {4, 2, 3}, ir::make_type(DType::kFloat, {4, 2, 3}));
  EXPECT_FALSE(changed_ok(eliminate_identities(grown.g, fake_context())));

  TypedPassThrough untyped("Reshape", {2, 3}, ir::TensorType{});
  EXPECT_FALSE(changed_ok(eliminate_identities(untyped.g, fake_context())));
}

TEST(IdentityElimination, TrainingDropoutOrUsedMaskIsKept) {
  PassThroughGraph training("Dropout", 13);
  ir::Value* yes = training.g.add_constant("yes", Tensor::from_vector<bool>(DType::kBool, {}, {true}));
  training.pass_through->inputs = {training.a, add_floats(training.g, "ratio", {0.5f}), yes};
  EXPECT_FALSE(changed_ok(eliminate_identities(training.g, fake_context())));

  PassThroughGraph runtime_flag("Dropout", 13);
  ir::Value* flag = add_input(runtime_flag.g, "flag", ir::make_type(DType::kBool, {}));
  runtime_flag.pass_through->inputs = {runtime_flag.a, add_floats(runtime_flag.g, "ratio", {0.5f}), flag};
  EXPECT_FALSE(changed_ok(eliminate_identities(runtime_flag.g, fake_context())));

  PassThroughGraph opset6_default("Dropout", 6);  // is_test defaults to 0: random dropout
  EXPECT_FALSE(changed_ok(eliminate_identities(opset6_default.g, fake_context())));

  PassThroughGraph mask_used("Dropout", 13);
  ir::Value* mask = mask_used.g.add_value("mask");
  mask_used.pass_through->outputs.push_back(mask);
  mask->producer = mask_used.pass_through;
  mask_used.g.outputs.push_back(mask);
  EXPECT_FALSE(changed_ok(eliminate_identities(mask_used.g, fake_context())));
}

TEST(IdentityElimination, GraphOutputKeepsItsNameByRewiringTheProducer) {
  ir::Graph g;
  ir::Value* x = add_input(g, "x", ir::make_type(DType::kFloat, {2}));
  ir::Value* a = g.add_value("a");
  ir::Value* y = g.add_value("y");
  ir::Node* relu = g.add_node("Relu", {x}, {a}, "relu");
  g.add_node("Identity", {a}, {y}, "id");
  g.outputs = {y};
  EXPECT_TRUE(changed_ok(eliminate_identities(g, fake_context())));
  ASSERT_TRUE(ir::verify(g).is_ok()) << ir::print_graph(g);
  ASSERT_EQ(g.nodes().size(), 1u);
  EXPECT_EQ(relu->outputs[0], y);
  EXPECT_EQ(y->producer, relu);
  EXPECT_EQ(a->producer, nullptr);
  EXPECT_EQ(g.outputs[0]->name, "y");
}

TEST(IdentityElimination, IdentityStaysWhenItsOutputNameCannotMove) {
  // y = Identity(x) with x a graph input; z = Identity(a) where a is also read by Neg.
  ir::Graph g;
  ir::Value* x = add_input(g, "x", ir::make_type(DType::kFloat, {2}));
  ir::Value* a = g.add_value("a");
  ir::Value* y = g.add_value("y");
  ir::Value* z = g.add_value("z");
  ir::Value* n = g.add_value("n");
  g.add_node("Identity", {x}, {y}, "input_to_output");
  g.add_node("Relu", {x}, {a}, "relu");
  g.add_node("Identity", {a}, {z}, "shared_input");
  g.add_node("Neg", {a}, {n}, "neg");
  g.outputs = {y, z, n};
  const std::string before = ir::print_graph(g);
  EXPECT_FALSE(changed_ok(eliminate_identities(g, fake_context())));
  EXPECT_EQ(ir::print_graph(g), before);
}

TEST(IdentityElimination, OutputCapturedBySubgraphIsKept) {
  PassThroughGraph t("Identity");
  ir::Value* s = t.g.add_value("s");
  ir::Node* scope = t.g.add_node("Scope", {t.x}, {s}, "scope");
  capture_in_subgraph(t.g, scope, "b");
  t.g.outputs.push_back(s);
  EXPECT_FALSE(changed_ok(eliminate_identities(t.g, fake_context())));
  EXPECT_EQ(t.g.nodes().size(), 4u);
  EXPECT_EQ(t.g.find_value("b")->producer, t.pass_through);
  EXPECT_TRUE(ir::verify(t.g).is_ok());
}

}  // namespace
}  // namespace kiln::passes
