// Tests of half_in_float: a float16 region (between the model's Casts) computed in float32, its
// float16 weights widened once, a float16 output the graph returns cast back down; nothing changes
// for providers with float16 kernels.
#include "kiln/passes/half_in_float.h"

#include <gtest/gtest.h>

#include "kiln/ir/float16.h"
#include "kiln/ir/printer.h"
#include "kiln/ir/verifier.h"
#include "passes/pass_test_util.h"

namespace kiln::passes {
namespace {

using namespace testing;

// x (float) -> Cast(float16) -> h -> Mul(h, w16) -> m -> Relu -> r -> Cast(float) -> y, and r is
// also a graph output (float16).
struct HalfRegion {
  ir::Graph g;
  ir::Value* x = add_input(g, "x", ir::make_type(DType::kFloat, {3}));
  ir::Value* h = g.add_value("h", ir::make_type(DType::kFloat16, {3}));
  ir::Value* w = g.add_constant("w", Tensor::from_vector<Float16>(DType::kFloat16, {3},
                                                                  {ir::to_float16(0.5f), ir::to_float16(-2.0f), ir::to_float16(3.0f)}));
  ir::Value* m = g.add_value("m", ir::make_type(DType::kFloat16, {3}));
  ir::Value* r = g.add_value("r", ir::make_type(DType::kFloat16, {3}));
  ir::Value* y = g.add_value("y", ir::make_type(DType::kFloat, {3}));
  ir::Node* mul = nullptr;
  ir::Node* relu = nullptr;

  HalfRegion() {
    g.add_node("Cast", {x}, {h}, "down", "", 13)->attributes["to"] = ir::Attribute::of_int(10);
    mul = g.add_node("Mul", {h, w}, {m}, "mul", "", 13);
    relu = g.add_node("Relu", {m}, {r}, "relu", "", 13);
    g.add_node("Cast", {r}, {y}, "up", "", 13)->attributes["to"] = ir::Attribute::of_int(1);
    g.outputs = {y, r};
  }
};

TEST(HalfInFloat, TheRegionComputesInFloatBetweenCasts) {
  HalfRegion t;
  PassContext ctx = fake_context();
  ctx.preferences.forms = {ops::GraphForm::kHalfInFloat};
  EXPECT_TRUE(changed_ok(compute_half_in_float(t.g, ctx)));
  ASSERT_TRUE(ir::verify(t.g).is_ok()) << ir::print_graph(t.g);
  // Mul and Relu read and write float32; Relu's float32 output feeds the casts down to r.
  for (const ir::Node* n : {t.mul, t.relu}) {
    for (const ir::Value* v : n->inputs) EXPECT_EQ(v->type.dtype, DType::kFloat) << n->describe() << " " << v->name;
    for (const ir::Value* v : n->outputs) EXPECT_EQ(v->type.dtype, DType::kFloat) << n->describe() << " " << v->name;
  }
  EXPECT_EQ(t.relu->inputs[0], t.mul->outputs[0]);  // no rounding to float16 inside the region
  const ir::Value* weights = t.mul->inputs[1];
  ASSERT_TRUE(weights->is_constant());
  EXPECT_EQ(floats_of(weights), (std::vector<float>{0.5f, -2.0f, 3.0f}));
  ASSERT_NE(t.r->producer, nullptr);
  EXPECT_EQ(t.r->producer->op_type, "Cast");
  EXPECT_EQ(t.r->producer->inputs[0], t.relu->outputs[0]);
  EXPECT_EQ(t.mul->inputs[0]->producer->op_type, "Cast");  // h cast up once, after the model's Cast down
  EXPECT_EQ(t.mul->inputs[0]->producer->inputs[0], t.h);
  EXPECT_FALSE(changed_ok(compute_half_in_float(t.g, ctx)));  // nothing left to convert
}

TEST(HalfInFloat, ProvidersWithHalfKernelsKeepTheRegion) {
  HalfRegion t;
  EXPECT_FALSE(changed_ok(compute_half_in_float(t.g, fake_context())));
  EXPECT_EQ(t.mul->outputs[0]->type.dtype, DType::kFloat16);
}

}  // namespace
}  // namespace kiln::passes
