// Tests of legacy_forms: on IR text of opset 6 nodes, the broadcast, PRelu, variadic and
// BatchNormalization forms become their current versions (checked on the graph: the printer does
// not show versions) with B (or the slope) reshaped to align the same way, constants in place and
// computed values through a Reshape, and the legacy attributes dropped; forms it cannot rewrite
// stay. End to end, a model of legacy forms gives the same results on cpu (after the rewrite) as on
// cpu_ref (which runs them as they are).
#include "kiln/passes/legacy_forms.h"

#include <gtest/gtest.h>

#include "kiln/ir/verifier.h"
#include "kiln/session.h"
#include "passes/pass_test_util.h"
#include "support/model_builder.h"

namespace kiln::passes {
namespace {

using namespace testing;

// `text`'s nodes as opset 6 nodes, after legacy_forms and dead-code elimination.
Rewritten modernised(std::string_view text) { return rewrite_ir(text, modernise_legacy_forms, fake_context(), 6); }

// The opset version of the node named `name` (the printer does not show it); -1 when there is none.
int opset_of(const Rewritten& r, std::string_view name) {
  const ir::Node* n = r.graph ? node_named(*r.graph, name) : nullptr;
  return n ? n->opset_version : -1;
}

TEST(LegacyForms, BroadcastAtAnAxisReshapesAConstantB) {
  const Rewritten r = modernised(R"(graph main (%a: float[2,3,4]) -> (%y) {
    %b = constant float[3] [1.0,2.0,3.0]
    %y: float[2,3,4] = Add 'add'(%a, %b) {axis=1, broadcast=1}
  })");
  EXPECT_TRUE(r.changed);
  EXPECT_EQ(r.printed,
            "graph main (%a: float[2,3,4]) -> (%y: float[2,3,4]) {\n"
            "  %b_aligned = constant float[3,1] [1.0,2.0,3.0]\n"
            "  %y: float[2,3,4] = Add 'add'(%a, %b_aligned)\n"
            "}");
  EXPECT_EQ(opset_of(r, "add"), 7);
  ASSERT_TRUE(r.graph && ir::verify(*r.graph).is_ok());
}

TEST(LegacyForms, AComputedBGoesThroughAReshape) {
  const Rewritten r = modernised(R"(graph main (%a: float[2,3,4], %b: float[2,3]) -> (%y) {
    %y: float[2,3,4] = Mul 'mul'(%a, %b) {axis=0, broadcast=1}
  })");
  EXPECT_TRUE(r.changed);
  EXPECT_EQ(r.printed,
            "graph main (%a: float[2,3,4], %b: float[2,3]) -> (%y: float[2,3,4]) {\n"
            "  %b_aligned_shape = constant int64[3] [2,3,1]\n"
            "  %b_aligned: float[2,3,1] = Reshape 'b_aligned'(%b, %b_aligned_shape)\n"
            "  %y: float[2,3,4] = Mul 'mul'(%a, %b_aligned)\n"
            "}");
  EXPECT_EQ(opset_of(r, "mul"), 7);
  EXPECT_EQ(origins_of(r, "b_aligned"), (std::vector<std::string>{"mul"}));
  ASSERT_TRUE(r.graph && ir::verify(*r.graph).is_ok());
}

// Opset 6's PRelu reads a 1-D slope per channel: [C, 1] as numpy broadcasts it onto [N, C, W].
TEST(LegacyForms, APerChannelPReluSlopeIsReshaped) {
  const Rewritten r = modernised(R"(graph main (%x: float[2,3,4]) -> (%y) {
    %slope = constant float[3] [0.1,0.2,0.3]
    %y: float[2,3,4] = PRelu 'prelu'(%x, %slope)
  })");
  EXPECT_TRUE(r.changed);
  EXPECT_NE(r.printed.find("%slope_aligned = constant float[3,1] [0.1,0.2,0.3]\n"), std::string::npos) << r.printed;
  EXPECT_NE(r.printed.find("%y: float[2,3,4] = PRelu 'prelu'(%x, %slope_aligned)\n"), std::string::npos) << r.printed;
  EXPECT_EQ(opset_of(r, "prelu"), 7);
}

// Sum-6 takes equal shapes only: version 8 as it is. BatchNormalization-6 in inference (is_test)
// is version 9, its legacy attributes dropped.
TEST(LegacyForms, VariadicOpsAndInferenceBatchNormalizationBecomeCurrentVersions) {
  const Rewritten r = modernised(R"(graph main (%x: float[2,3,4,4]) -> (%y) {
    %p = constant float[3] [1.0,2.0,0.5]
    %n: float[2,3,4,4] = BatchNormalization 'bn'(%x, %p, %p, %p, %p) {is_test=1, spatial=1}
    %y: float[2,3,4,4] = Sum 'sum'(%n, %x)
  })");
  EXPECT_TRUE(r.changed);
  EXPECT_NE(r.printed.find("%n: float[2,3,4,4] = BatchNormalization 'bn'(%x, %p, %p, %p, %p)\n"), std::string::npos) << r.printed;
  EXPECT_EQ(opset_of(r, "bn"), 9);
  EXPECT_EQ(opset_of(r, "sum"), 8);
}

// A B of unknown rank cannot be aligned; a per-element (spatial 0) or training BatchNormalization
// has no current form.
TEST(LegacyForms, FormsItCannotRewriteStay) {
  const Rewritten r = modernised(R"(graph main (%a: float[2,3], %b: float, %x: float[2,3,4,4]) -> (%y, %z, %t) {
    %p = constant float[12]
    %y = Add 'add'(%a, %b) {broadcast=1}
    %z = BatchNormalization 'per_element'(%x, %p, %p, %p, %p) {is_test=1, spatial=0}
    %t = BatchNormalization 'training'(%x, %p, %p, %p, %p)
  })");
  EXPECT_FALSE(r.changed);
  EXPECT_NE(r.printed.find("%y: undefined = Add 'add'(%a, %b) {broadcast=1}\n"), std::string::npos) << r.printed;
  EXPECT_NE(r.printed.find("BatchNormalization 'per_element'(%x, %p, %p, %p, %p) {is_test=1, spatial=0}\n"), std::string::npos)
      << r.printed;
  for (const char* name : {"add", "per_element", "training"}) EXPECT_EQ(opset_of(r, name), 6) << name;
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
