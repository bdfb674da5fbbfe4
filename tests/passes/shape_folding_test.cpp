// Tests of shape_folding, alone and followed by constant_folding on a Shape -> Gather -> Unsqueeze
// -> Concat chain feeding a Reshape (the pattern of PyTorch's dynamic-shape exports).
#include "kiln/passes/shape_folding.h"

#include <gtest/gtest.h>

#include "kiln/ir/printer.h"
#include "kiln/ir/verifier.h"
#include "kiln/passes/constant_folding.h"
#include "kiln/passes/dead_code_elimination.h"
#include "passes/pass_test_util.h"

namespace kiln::passes {
namespace {

using namespace testing;

TEST(ShapeFolding, ShapeAndSizeOfStaticValuesBecomeConstants) {
  ir::Graph g;
  ir::Value* x = add_input(g, "x", ir::make_type(DType::kFloat, {2, 3, 4}));
  ir::Value* shape = g.add_value("shape");
  ir::Value* size = g.add_value("size");
  g.add_node("Shape", {x}, {shape}, "shape", "", 13);
  g.add_node("Size", {x}, {size}, "size", "", 13);
  g.outputs = {shape, size};
  EXPECT_TRUE(changed_ok(fold_shapes(g, fake_context())));
  EXPECT_TRUE(g.nodes().empty());
  EXPECT_EQ(int64s_of(shape), (std::vector<int64_t>{2, 3, 4}));
  EXPECT_EQ(size->initializer->shape(), std::vector<int64_t>{});
  EXPECT_EQ(int64s_of(size), (std::vector<int64_t>{24}));
  EXPECT_EQ(size->type.to_string(), "int64[]");
  EXPECT_EQ(g.outputs[0]->name, "shape");
  EXPECT_TRUE(ir::verify(g).is_ok()) << ir::print_graph(g);
}

TEST(ShapeFolding, Opset15StartAndEndSliceAndClamp) {
  ir::Graph g;
  ir::Value* x = add_input(g, "x", ir::make_type(DType::kFloat, {2, 3, 4, 5}));
  auto shape_node = [&](const std::string& name, int64_t start, std::optional<int64_t> end) {
    ir::Value* out = g.add_value(name);
    ir::Node* n = g.add_node("Shape", {x}, {out}, name, "", 15);
    n->attributes["start"] = ir::Attribute::of_int(start);
    if (end) n->attributes["end"] = ir::Attribute::of_int(*end);
    g.outputs.push_back(out);
    return out;
  };
  ir::Value* middle = shape_node("middle", 1, -1);
  ir::Value* clamped = shape_node("clamped", -10, 10);
  ir::Value* tail = shape_node("tail", -1, std::nullopt);
  ir::Value* empty = shape_node("empty", 3, 1);
  EXPECT_TRUE(changed_ok(fold_shapes(g, fake_context())));
  // Expected slices of [2,3,4,5] by hand: [1:-1], [-10:10] clamped to [0:4], [-1:], [3:1].
  EXPECT_EQ(int64s_of(middle), (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(int64s_of(clamped), (std::vector<int64_t>{2, 3, 4, 5}));
  EXPECT_EQ(int64s_of(tail), (std::vector<int64_t>{5}));
  EXPECT_EQ(empty->initializer->shape(), std::vector<int64_t>{0});
}

TEST(ShapeFolding, SymbolicOrUnknownShapesAreLeft) {
  ir::Graph g;
  ir::Value* x = add_input(g, "x", ir::TensorType{DType::kFloat, ir::Shape({ir::Dim::symbol("N"), ir::Dim(3)})});
  ir::Value* unranked = add_input(g, "u", ir::TensorType{DType::kFloat, std::nullopt});
  ir::Value* s1 = g.add_value("s1");
  ir::Value* s2 = g.add_value("s2");
  g.add_node("Shape", {x}, {s1}, "shape_x", "", 13);
  g.add_node("Size", {unranked}, {s2}, "size_u", "", 13);
  g.outputs = {s1, s2};
  const std::string before = ir::print_graph(g);
  EXPECT_FALSE(changed_ok(fold_shapes(g, fake_context())));
  EXPECT_EQ(ir::print_graph(g), before);
}

TEST(ShapeFolding, GatherOfStaticDimsFoldsUnderASymbolicBatch) {
  ir::Graph g;
  ir::Value* x = add_input(
      g, "x", ir::TensorType{DType::kFloat, ir::Shape({ir::Dim::symbol("batch"), ir::Dim(32), ir::Dim(768)})});
  ir::Value* shape = g.add_value("shape", ir::make_type(DType::kInt64, {3}));
  ir::Value* hidden = g.add_value("hidden");
  ir::Value* batch = g.add_value("batch");
  g.add_node("Shape", {x}, {shape}, "shape", "", 13);
  g.add_node("Gather", {shape, add_int64_scalar(g, "two", 2)}, {hidden}, "gather_hidden", "", 13);
  g.add_node("Gather", {shape, add_int64_scalar(g, "zero", 0)}, {batch}, "gather_batch", "", 13);
  g.outputs = {hidden, batch};
  EXPECT_TRUE(changed_ok(fold_shapes(g, fake_context())));
  ASSERT_TRUE(hidden->is_constant()) << ir::print_graph(g);
  EXPECT_EQ(hidden->initializer->shape(), std::vector<int64_t>{});  // scalar index -> scalar
  EXPECT_EQ(int64s_of(hidden), (std::vector<int64_t>{768}));
  EXPECT_FALSE(batch->is_constant());  // the symbolic batch stays computed at run time
  EXPECT_EQ(g.nodes().size(), 2u);     // Shape and the batch Gather remain
}

TEST(ShapeFolding, ShapeChainFeedingReshapeFoldsWithConstantFolding) {
  ir::Graph g;
  ir::Value* x = add_input(g, "x", ir::make_type(DType::kFloat, {2, 3, 4}));
  ir::Value* shape = g.add_value("shape", ir::make_type(DType::kInt64, {3}));
  ir::Value* dim0 = g.add_value("dim0", ir::make_type(DType::kInt64, {}));
  ir::Value* dim0_1d = g.add_value("dim0_1d", ir::make_type(DType::kInt64, {1}));
  ir::Value* target = g.add_value("target", ir::make_type(DType::kInt64, {2}));
  ir::Value* y = g.add_value("y", ir::make_type(DType::kFloat, {2, 12}));
  g.add_node("Shape", {x}, {shape}, "shape", "", 13);
  g.add_node("Gather", {shape, add_int64_scalar(g, "zero", 0)}, {dim0},
             "gather", "", 13);
  g.add_node("Unsqueeze", {dim0, add_int64s(g, "axes", {0})}, {dim0_1d}, "unsqueeze", "", 13);
  g.add_node("Concat", {dim0_1d, add_int64s(g, "minus_one", {-1})}, {target}, "concat", "", 13);
  g.add_node("Reshape", {x, target}, {y}, "reshape", "", 13);
  g.outputs = {y};

  EXPECT_TRUE(changed_ok(fold_shapes(g, fake_context())));
  EXPECT_TRUE(changed_ok(fold_constants(g, fake_context())));
  EXPECT_TRUE(changed_ok(eliminate_dead_code(g, fake_context())));
  ASSERT_TRUE(ir::verify(g).is_ok()) << ir::print_graph(g);
  ASSERT_EQ(g.nodes().size(), 1u) << ir::print_graph(g);
  const ir::Node& reshape = *g.nodes()[0];
  ASSERT_TRUE(reshape.inputs[1]->is_constant());
  EXPECT_EQ(int64s_of(reshape.inputs[1]), (std::vector<int64_t>{2, -1}));
  EXPECT_EQ(ir::print_graph(g),
            "graph main (%x: float[2,3,4]) -> (%y: float[2,12]) {\n"
            "  %target = constant int64[2] [2,-1]\n"
            "  %y: float[2,12] = Reshape 'reshape'(%x, %target)\n"
            "}");
}

}  // namespace
}  // namespace kiln::passes
