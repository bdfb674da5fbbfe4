// Tests of legacy_forms: opset 1-8 broadcast, PRelu, variadic and BatchNormalization forms become
// their current versions with B (or the slope) reshaped to align the same way, constants in place
// and computed values through a Reshape; forms it cannot rewrite stay; and a model of legacy forms
// gives the same results on cpu (after the rewrite) as on cpu_ref (which runs them as they are).
#include "kiln/passes/legacy_forms.h"

#include <gtest/gtest.h>

#include "kiln/ir/verifier.h"
#include "kiln/session.h"
#include "passes/pass_test_util.h"
#include "support/model_builder.h"

namespace kiln::passes {
namespace {

using namespace testing;

TEST(LegacyForms, BroadcastAtAnAxisReshapesAConstantB) {
  ir::Graph g;
  ir::Value* a = add_input(g, "a", ir::make_type(DType::kFloat, {2, 3, 4}));
  ir::Value* b = add_floats(g, "b", {1, 2, 3});
  ir::Value* y = g.add_value("y", ir::make_type(DType::kFloat, {2, 3, 4}));
  ir::Node* add = g.add_node("Add", {a, b}, {y}, "add", "", 6);
  add->attributes["broadcast"] = ir::Attribute::of_int(1);
  add->attributes["axis"] = ir::Attribute::of_int(1);
  g.outputs = {y};
  EXPECT_TRUE(changed_ok(modernise_legacy_forms(g, fake_context())));
  ASSERT_TRUE(ir::verify(g).is_ok());
  ASSERT_EQ(g.nodes().size(), 1u);
  const ir::Node& node = *g.nodes()[0];
  EXPECT_EQ(node.opset_version, 7);
  EXPECT_FALSE(node.has_attr("broadcast"));
  EXPECT_FALSE(node.has_attr("axis"));
  ASSERT_TRUE(node.input(1)->is_constant());
  EXPECT_EQ(node.input(1)->initializer->shape(), (std::vector<int64_t>{3, 1}));
  EXPECT_EQ(floats_of(node.input(1)), (std::vector<float>{1, 2, 3}));
}

TEST(LegacyForms, AComputedBGoesThroughAReshape) {
  ir::Graph g;
  ir::Value* a = add_input(g, "a", ir::make_type(DType::kFloat, {2, 3, 4}));
  ir::Value* b = add_input(g, "b", ir::make_type(DType::kFloat, {2, 3}));
  ir::Value* y = g.add_value("y", ir::make_type(DType::kFloat, {2, 3, 4}));
  ir::Node* mul = g.add_node("Mul", {a, b}, {y}, "mul", "", 6);
  mul->attributes["broadcast"] = ir::Attribute::of_int(1);
  mul->attributes["axis"] = ir::Attribute::of_int(0);
  g.outputs = {y};
  EXPECT_TRUE(changed_ok(modernise_legacy_forms(g, fake_context())));
  ASSERT_TRUE(ir::verify(g).is_ok());
  ASSERT_EQ(g.nodes().size(), 2u);
  EXPECT_EQ(g.nodes()[0]->op_type, "Reshape");
  EXPECT_EQ(int64s_of(g.nodes()[0]->input(1)), (std::vector<int64_t>{2, 3, 1}));
  EXPECT_EQ(g.nodes()[1]->input(1), g.nodes()[0]->outputs[0]);
}

TEST(LegacyForms, FormsItCannotRewriteStay) {
  ir::Graph g;
  ir::Value* a = add_input(g, "a", ir::make_type(DType::kFloat, {2, 3}));
  ir::Value* b = add_input(g, "b", ir::TensorType{DType::kFloat, std::nullopt});  // rank unknown
  ir::Value* y = g.add_value("y");
  g.add_node("Add", {a, b}, {y}, "add", "", 6)->attributes["broadcast"] = ir::Attribute::of_int(1);
  ir::Value* x = add_input(g, "x", ir::make_type(DType::kFloat, {2, 3, 4, 4}));
  ir::Value* z = g.add_value("z");
  std::vector<ir::Value*> params;
  for (const char* name : {"scale", "bias", "mean", "var"}) params.push_back(add_floats(g, name, std::vector<float>(12, 1.0f)));
  ir::Node* bn = g.add_node("BatchNormalization", {x, params[0], params[1], params[2], params[3]}, {z}, "bn", "", 7);
  bn->attributes["spatial"] = ir::Attribute::of_int(0);  // per element: no current form
  g.outputs = {y, z};
  EXPECT_FALSE(changed_ok(modernise_legacy_forms(g, fake_context())));
  EXPECT_EQ(g.nodes()[0]->opset_version, 6);
  EXPECT_EQ(g.nodes()[1]->opset_version, 7);
}

void set_int(onnx::NodeProto& node, const std::string& name, int64_t value) {
  onnx::AttributeProto* a = node.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(value);
}

// y = BatchNormalization-6(PRelu-6(Add-6(x, b at axis 1), slope per channel)) + Sum-6(x, x).
TEST(LegacyForms, AModelOfLegacyFormsRunsOnCpuAsOnTheReference) {
  ::kiln::testing::ScratchDir dir("legacy_forms");
  ::kiln::testing::ModelBuilder m(6);
  m.input("x", onnx::TensorProto::FLOAT, {int64_t{2}, int64_t{3}, int64_t{4}});
  m.output("y", onnx::TensorProto::FLOAT, {int64_t{2}, int64_t{3}, int64_t{4}});
  m.float_initializer("b", {3}, {0.5f, -1.0f, 2.0f});
  m.float_initializer("slope", {3}, {0.1f, 0.2f, 0.3f});
  m.float_initializer("scale", {3}, {1.0f, 2.0f, 0.5f});
  m.float_initializer("shift", {3}, {0.0f, 1.0f, -1.0f});
  m.float_initializer("mean", {3}, {0.1f, 0.0f, -0.2f});
  m.float_initializer("var", {3}, {1.0f, 4.0f, 0.25f});
  onnx::NodeProto& add = m.node("Add", {"x", "b"}, {"shifted"}, "add");
  set_int(add, "broadcast", 1);
  set_int(add, "axis", 1);
  m.node("PRelu", {"shifted", "slope"}, {"activated"}, "prelu");
  set_int(m.node("BatchNormalization", {"activated", "scale", "shift", "mean", "var"}, {"normalised"}, "bn"), "is_test", 1);
  m.node("Sum", {"x", "x"}, {"doubled"}, "sum");
  m.node("Sum", {"normalised", "doubled"}, {"y"}, "total");
  const std::string model = m.save(dir.file("legacy.onnx"));
  std::vector<float> values(24);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(static_cast<int>(i % 7) - 3) * 0.5f;
  const Tensor x = Tensor::from_vector<float>(DType::kFloat, {2, 3, 4}, values);
  std::vector<std::vector<float>> results;
  for (const char* provider : {"cpu", "cpu_ref"}) {
    SessionOptions options;
    options.providers = {provider};
    options.disabled_passes = std::string(provider) == "cpu_ref" ? std::vector<std::string>{"legacy_forms"} : std::vector<std::string>{};
    auto session = Session::load(model, options);
    ASSERT_TRUE(session.is_ok()) << provider << ": " << session.status().to_string();
    auto out = session.value()->run({{"x", x}});
    ASSERT_TRUE(out.is_ok()) << provider << ": " << out.status().to_string();
    const Tensor& y = out.value().at("y");
    results.emplace_back(y.data<float>(), y.data<float>() + y.element_count());
  }
  for (size_t i = 0; i < results[0].size(); ++i) EXPECT_NEAR(results[0][i], results[1][i], 1e-5f) << i;
  // One element by hand: x[0, 1, 0] = 0.5 -> + b[1] = -0.5 -> PRelu 0.2: -0.1 -> (v - 0) / 2 * 2 + 1
  // = 0.9, plus 2x = 1 -> 1.9.
  EXPECT_NEAR(results[1][4], 1.9f, 1e-5f);
}

}  // namespace
}  // namespace kiln::passes
