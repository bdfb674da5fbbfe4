// Tests of the FLOP estimates: products count 2 per multiply-add plus their epilogue; other ops one
// per output element; symbolic dims as 1.
#include "kiln/analysis/flops.h"

#include <gtest/gtest.h>

namespace kiln::analysis {
namespace {

TEST(Flops, ProductsCountMultiplyAddsOtherOpsCountOutputs) {
  ir::Graph g;
  ir::Value* x = g.add_value("x", ir::make_type(DType::kFloat, {1, 3, 8, 8}));
  ir::Value* w = g.add_value("w", ir::make_type(DType::kFloat, {4, 3, 3, 3}));
  ir::Value* c = g.add_value("c", ir::make_type(DType::kFloat, {1, 4, 8, 8}));
  const ir::Node* conv = g.add_node("Conv", {x, w}, {c}, "conv", "", 11);
  EXPECT_EQ(estimate_flops(*conv), 2 * 256 * 27 + 256);

  ir::Value* a = g.add_value("a", ir::TensorType{DType::kFloat, ir::Shape({ir::Dim::symbol("B"), 2, 3})});
  ir::Value* b = g.add_value("b", ir::make_type(DType::kFloat, {3, 5}));
  ir::Value* m = g.add_value("m", ir::TensorType{DType::kFloat, ir::Shape({ir::Dim::symbol("B"), 2, 5})});
  const ir::Node* matmul = g.add_node("MatMul", {a, b}, {m}, "matmul", "", 13);
  EXPECT_EQ(estimate_flops(*matmul), 2 * 10 * 3 + 10);  // B counts as 1

  ir::Value* r = g.add_value("r", ir::make_type(DType::kFloat, {1, 4, 8, 8}));
  EXPECT_EQ(estimate_flops(*g.add_node("Relu", {c}, {r}, "relu", "", 14)), 256);
}

}  // namespace
}  // namespace kiln::analysis
