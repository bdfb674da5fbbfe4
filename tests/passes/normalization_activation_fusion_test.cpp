// Tests of normalization_activation_fusion: a region's BatchNormalization takes the Relu that alone
// reads it; not another activation, not a Relu whose input something else reads, not without the
// provider's activation layouts, and not an ONNX BatchNormalization (whose attributes it must not
// extend).
#include "kiln/passes/normalization_activation_fusion.h"

#include <gtest/gtest.h>

#include "kiln/ir/verifier.h"
#include "kiln/ops/activation.h"
#include "passes/pass_test_util.h"

namespace kiln::passes {
namespace {

using namespace testing;

// x -> BatchNormalization (wrapped in kiln.InLayout unless `plain`) -> n -> `activation` -> y,
// and n -> Neg -> z when `shared`.
struct NormThenActivation {
  ir::Graph g;
  ir::Node* norm = nullptr;
  explicit NormThenActivation(const std::string& activation, bool shared = false, bool plain = false) {
    ir::Value* x = add_input(g, "x", ir::make_type(DType::kFloat, {1, 1, 2, 2, 16}));
    std::vector<ir::Value*> inputs{x};
    for (const char* name : {"scale", "bias", "mean", "var"}) inputs.push_back(add_floats(g, name, std::vector<float>(16, 1.0f)));
    ir::Value* n = g.add_value("n", ir::make_type(DType::kFloat, {1, 1, 2, 2, 16}));
    ir::Value* y = g.add_value("y", ir::make_type(DType::kFloat, {1, 1, 2, 2, 16}));
    norm = plain ? g.add_node("BatchNormalization", inputs, {n}, "bn", "", 15) : g.add_node("InLayout", inputs, {n}, "bn", "kiln", 1);
    if (!plain) {
      norm->attributes["op"] = ir::Attribute::of_string("BatchNormalization");
      norm->attributes["op_version"] = ir::Attribute::of_int(15);
      norm->attributes["layout"] = ir::Attribute::of_string("NCHW16c");
    }
    g.add_node(activation, {n}, {y}, "act", "", 14);
    g.outputs = {y};
    if (shared) {
      ir::Value* z = g.add_value("z");
      g.add_node("Neg", {n}, {z}, "neg", "", 13);
      g.outputs.push_back(z);
    }
  }
};

PassContext with_layouts() {
  PassContext ctx = fake_context();
  ctx.preferences = {{ops::GraphForm::kActivationLayouts}, {ops::ActivationLayout::blocked(16)}};
  return ctx;
}

TEST(NormalizationActivationFusion, TheReluAfterARegionsBatchNormalizationFoldsIntoIt) {
  NormThenActivation t("Relu");
  EXPECT_TRUE(changed_ok(fuse_normalization_activations(t.g, with_layouts())));
  ASSERT_TRUE(ir::verify(t.g).is_ok());
  ASSERT_EQ(t.g.nodes().size(), 1u);
  EXPECT_EQ(t.norm->outputs[0], t.g.outputs[0]);
  ASSERT_TRUE(ops::fused_activation(*t.norm));
  EXPECT_EQ(ops::fused_activation(*t.norm)->function, ops::Elementwise::kRelu);
  EXPECT_EQ(t.norm->source_nodes(), (std::vector<std::string>{"bn", "act"}));
}

TEST(NormalizationActivationFusion, OtherCasesStayAsTheyAre) {
  NormThenActivation sigmoid("Sigmoid");
  EXPECT_FALSE(changed_ok(fuse_normalization_activations(sigmoid.g, with_layouts())));
  NormThenActivation shared("Relu", true);
  EXPECT_FALSE(changed_ok(fuse_normalization_activations(shared.g, with_layouts())));
  NormThenActivation plain("Relu", false, true);
  EXPECT_FALSE(changed_ok(fuse_normalization_activations(plain.g, with_layouts())));
  NormThenActivation no_layouts("Relu");
  EXPECT_FALSE(changed_ok(fuse_normalization_activations(no_layouts.g, fake_context())));
  EXPECT_EQ(no_layouts.g.nodes().size(), 2u);
}

}  // namespace
}  // namespace kiln::passes
