// Tests of product_slicing: a product read only by last-axis Slices becomes one product per Slice
// over those weight and bias columns; any other reader, or a residual, keeps it whole.
#include "kiln/passes/product_slicing.h"

#include <gtest/gtest.h>

#include "kiln/ir/printer.h"
#include "kiln/ir/verifier.h"
#include "passes/pass_test_util.h"

namespace kiln::passes {
namespace {

using namespace testing;

// x [2,3] -> FusedMatMul(W [3,6] = 0..17, bias [6] = 100..105) -> y [2,6] -> Slices of columns
// [0,2), [2,6) -> Neg each.
struct PackedProduct {
  ir::Graph g;
  ir::Value* x = add_input(g, "x", ir::make_type(DType::kFloat, {2, 3}));
  ir::Value* y = g.add_value("y", ir::make_type(DType::kFloat, {2, 6}));
  ir::Node* product = nullptr;
  std::vector<ir::Value*> parts;

  explicit PackedProduct(bool with_residual = false) {
    std::vector<float> w(18), b(6);
    for (int i = 0; i < 18; ++i) w[i] = static_cast<float>(i);
    for (int i = 0; i < 6; ++i) b[i] = 100.0f + static_cast<float>(i);
    ir::Value* weights = g.add_constant("w", Tensor::from_vector<float>(DType::kFloat, {3, 6}, w));
    ir::Value* bias = g.add_constant("b", Tensor::from_vector<float>(DType::kFloat, {6}, b));
    std::vector<ir::Value*> inputs = {x, weights, bias};
    if (with_residual) inputs.push_back(add_input(g, "r", ir::make_type(DType::kFloat, {2, 6})));
    product = g.add_node("FusedMatMul", inputs, {y}, "qkv", "kiln", 1);
    product->attributes["activation"] = ir::Attribute::of_string("Relu");
    add_slice(0, 2, "q");
    add_slice(2, 6, "kv");
  }

  void add_slice(int64_t begin, int64_t end, const std::string& name) {
    ir::Value* part = g.add_value(name, ir::make_type(DType::kFloat, {2, end - begin}));
    g.add_node("Slice", {y, add_int64s(g, name + "_starts", {begin}), add_int64s(g, name + "_ends", {end}),
                         add_int64s(g, name + "_axes", {-1})},
               {part}, name + "_slice", "", 13);
    ir::Value* out = g.add_value(name + "_out");
    g.add_node("Neg", {part}, {out}, name + "_neg");
    g.outputs.push_back(out);
    parts.push_back(part);
  }
};

TEST(ProductSlicing, EachSliceBecomesAProductOverItsColumns) {
  PackedProduct t;
  EXPECT_TRUE(changed_ok(slice_products(t.g, fake_context())));
  ASSERT_TRUE(ir::verify(t.g).is_ok()) << ir::print_graph(t.g);
  const ir::Node* q = t.parts[0]->producer;
  const ir::Node* kv = t.parts[1]->producer;
  ASSERT_TRUE(q && kv);
  EXPECT_EQ(q->op_type, "FusedMatMul");
  EXPECT_EQ(q->inputs[0], t.x);
  EXPECT_EQ(q->attr_string("activation"), "Relu");
  EXPECT_EQ(floats_of(q->inputs[1]), (std::vector<float>{0, 1, 6, 7, 12, 13}));
  EXPECT_EQ(q->inputs[1]->initializer->shape(), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(floats_of(q->inputs[2]), (std::vector<float>{100, 101}));
  EXPECT_EQ(floats_of(kv->inputs[2]), (std::vector<float>{102, 103, 104, 105}));
  EXPECT_EQ(kv->inputs[1]->initializer->shape(), (std::vector<int64_t>{3, 4}));
  const std::vector<std::string> origins = q->source_nodes();
  EXPECT_NE(std::find(origins.begin(), origins.end(), "q_slice"), origins.end());
  for (const auto& n : t.g.nodes()) EXPECT_NE(n->op_type, "Slice");
}

TEST(ProductSlicing, OtherReadersResidualsAndOtherAxesKeepTheProductWhole) {
  {
    PackedProduct t;
    ir::Value* also = t.g.add_value("also");
    t.g.add_node("Relu", {t.y}, {also}, "other");
    t.g.outputs.push_back(also);
    EXPECT_FALSE(changed_ok(slice_products(t.g, fake_context())));
  }
  {
    PackedProduct t(/*with_residual=*/true);
    EXPECT_FALSE(changed_ok(slice_products(t.g, fake_context())));
  }
  {
    PackedProduct t;
    // A Slice of rows (axis 0) is not a cut of the weights.
    ir::Value* rows = t.g.add_value("rows", ir::make_type(DType::kFloat, {1, 6}));
    t.g.add_node("Slice", {t.y, add_int64s(t.g, "rs", {0}), add_int64s(t.g, "re", {1}), add_int64s(t.g, "ra", {0})}, {rows},
                 "row_slice", "", 13);
    t.g.outputs.push_back(rows);
    EXPECT_FALSE(changed_ok(slice_products(t.g, fake_context())));
  }
}

}  // namespace
}  // namespace kiln::passes
