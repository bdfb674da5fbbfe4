// Tests of unit_transpose_elimination: which Transposes keep every element in place, and their
// replacement by a Reshape to the output's dims.
#include "kiln/passes/unit_transpose_elimination.h"

#include <gtest/gtest.h>

#include "kiln/ir/printer.h"
#include "kiln/ir/verifier.h"
#include "passes/pass_test_util.h"

namespace kiln::passes {
namespace {

using namespace testing;

TEST(UnitTransposeElimination, MemoryOrderKeptOnlyWhenNonUnitDimsKeepTheirOrder) {
  const ir::Dim n = ir::Dim::symbol("N");
  EXPECT_TRUE(transpose_keeps_memory_order({1, 197, 768}, {1, 0, 2}));
  EXPECT_TRUE(transpose_keeps_memory_order({4, 1, 1, 5}, {0, 2, 3, 1}));
  EXPECT_TRUE(transpose_keeps_memory_order({2, 3}, {0, 1}));
  EXPECT_FALSE(transpose_keeps_memory_order({2, 197, 768}, {1, 0, 2}));
  EXPECT_FALSE(transpose_keeps_memory_order({n, 197, 768}, {1, 0, 2}));  // N may be more than 1
  EXPECT_FALSE(transpose_keeps_memory_order({1, 3, 4}, {0, 2, 1}));
  EXPECT_FALSE(transpose_keeps_memory_order({1, 3}, {1, 0, 2}));  // perm of another rank
  EXPECT_FALSE(transpose_keeps_memory_order({1, 3}, {2, 0}));     // axis out of range
}

// x -> Transpose(perm) -> t -> Neg -> y
struct TransposeGraph {
  ir::Graph g;
  ir::Value* x;
  ir::Value* t;
  ir::Node* transpose;

  TransposeGraph(const std::vector<int64_t>& x_dims, const std::vector<int64_t>& perm, const std::vector<int64_t>& t_dims) {
    x = add_input(g, "x", ir::make_type(DType::kFloat, x_dims));
    t = g.add_value("t", ir::make_type(DType::kFloat, t_dims));
    ir::Value* y = g.add_value("y", ir::make_type(DType::kFloat, t_dims));
    transpose = g.add_node("Transpose", {x}, {t}, "transpose", "", 13);
    transpose->attributes["perm"] = ir::Attribute::of_ints(perm);
    g.add_node("Neg", {t}, {y}, "neg");
    g.outputs = {y};
  }
};

TEST(UnitTransposeElimination, SizeOneMovesBecomeAReshapeToTheOutputDims) {
  TransposeGraph tg({1, 5, 7}, {1, 0, 2}, {5, 1, 7});
  EXPECT_TRUE(changed_ok(eliminate_unit_transposes(tg.g, fake_context())));
  ASSERT_TRUE(ir::verify(tg.g).is_ok()) << ir::print_graph(tg.g);
  const ir::Node* reshape = tg.t->producer;
  ASSERT_NE(reshape, nullptr);
  EXPECT_EQ(reshape->op_type, "Reshape");
  EXPECT_EQ(reshape->inputs[0], tg.x);
  EXPECT_EQ(int64s_of(reshape->inputs[1]), (std::vector<int64_t>{5, 1, 7}));
  EXPECT_EQ(reshape->source_nodes(), (std::vector<std::string>{"transpose"}));
}

void expect_unchanged(TransposeGraph& tg) {
  const std::string before = ir::print_graph(tg.g);
  EXPECT_FALSE(changed_ok(eliminate_unit_transposes(tg.g, fake_context())));
  EXPECT_EQ(ir::print_graph(tg.g), before);
}

TEST(UnitTransposeElimination, RealTransposesAndEmptyTensorsStay) {
  TransposeGraph real({2, 5, 7}, {1, 0, 2}, {5, 2, 7});
  expect_unchanged(real);
  TransposeGraph empty({1, 0, 7}, {1, 0, 2}, {0, 1, 7});
  expect_unchanged(empty);
}

}  // namespace
}  // namespace kiln::passes
