// Tests of layout-boundary detection: kiln.Relayout nodes, and Transposes into and out of nodes
// working in another layout, count; other Transposes do not.
#include "kiln/analysis/layout_boundary.h"

#include <gtest/gtest.h>

namespace kiln::analysis {
namespace {

TEST(LayoutBoundary, TransposesIntoAndOutOfChannelsLastNodesAreLayoutBoundaries) {
  ir::Graph g;
  ir::Value* x = g.add_value("x", ir::make_type(DType::kFloat, {1, 3, 4, 4}));
  ir::Value* x_last = g.add_value("x_last", ir::make_type(DType::kFloat, {1, 4, 4, 3}));
  ir::Value* p = g.add_value("p", ir::make_type(DType::kFloat, {1, 2, 2, 3}));
  ir::Value* p_first = g.add_value("p_first", ir::make_type(DType::kFloat, {1, 3, 2, 2}));
  ir::Value* q = g.add_value("q", ir::make_type(DType::kFloat, {1, 2, 3, 2}));
  const ir::Node* in = g.add_node("Transpose", {x}, {x_last}, "to_nhwc", "", 13);
  ir::Node* pool = g.add_node("InLayout", {x_last}, {p}, "pool", "kiln", 1);
  pool->attributes["op"] = ir::Attribute::of_string("MaxPool");
  pool->attributes["layout"] = ir::Attribute::of_string("NHWC");
  const ir::Node* out = g.add_node("Transpose", {p}, {p_first}, "to_nchw", "", 13);
  const ir::Node* plain = g.add_node("Transpose", {p_first}, {q}, "other", "", 13);
  EXPECT_TRUE(is_layout_boundary(g, *in));
  EXPECT_TRUE(is_layout_boundary(g, *out));
  EXPECT_FALSE(is_layout_boundary(g, *plain));
  EXPECT_FALSE(is_layout_boundary(g, *pool));
}

TEST(LayoutBoundary, RelayoutsAreLayoutBoundaries) {
  ir::Graph g;
  ir::Value* x = g.add_value("x", ir::make_type(DType::kFloat, {1, 16, 4, 4}));
  ir::Value* x_blocked = g.add_value("x_blocked", ir::make_type(DType::kFloat, {1, 1, 4, 4, 16}));
  ir::Node* relayout = g.add_node("Relayout", {x}, {x_blocked}, "to_blocked", "kiln", 1);
  relayout->attributes["to"] = ir::Attribute::of_string("NCHW16c");
  EXPECT_TRUE(is_layout_boundary(g, *relayout));
}

}  // namespace
}  // namespace kiln::analysis
