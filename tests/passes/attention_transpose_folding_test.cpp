// Tests of attention_transpose_folding: the Transposes around a kiln.Attention become its operand
// permutations, composed with those already there; shared Transposes stay.
#include "kiln/passes/attention_transpose_folding.h"

#include <gtest/gtest.h>

#include "kiln/ir/printer.h"
#include "kiln/ir/verifier.h"
#include "passes/pass_test_util.h"

namespace kiln::passes {
namespace {

using namespace testing;

// q, k, v [1,5,3,4] -> Transposes -> kiln.Attention -> y [1,3,5,4] -> Transpose -> out -> Neg -> z
struct HeadsGraph {
  ir::Graph g;
  ir::Value* q = add_input(g, "q", ir::make_type(DType::kFloat, {1, 5, 3, 4}));
  ir::Value* k = add_input(g, "k", ir::make_type(DType::kFloat, {1, 5, 3, 4}));
  ir::Value* v = add_input(g, "v", ir::make_type(DType::kFloat, {1, 5, 3, 4}));
  ir::Value* out = g.add_value("out", ir::make_type(DType::kFloat, {1, 5, 3, 4}));
  ir::Node* attention = nullptr;

  ir::Value* transposed(ir::Value* x, const std::vector<int64_t>& perm, const std::string& name) {
    ir::Value* t = g.add_value(name);
    g.add_node("Transpose", {x}, {t}, name + "_node", "", 13)->attributes["perm"] = ir::Attribute::of_ints(perm);
    return t;
  }

  HeadsGraph() {
    ir::Value* qt = transposed(q, {0, 2, 1, 3}, "qt");
    ir::Value* kt = transposed(k, {0, 2, 3, 1}, "kt");
    ir::Value* vt = transposed(v, {0, 2, 1, 3}, "vt");
    ir::Value* y = g.add_value("y", ir::make_type(DType::kFloat, {1, 3, 5, 4}));
    attention = g.add_node("Attention", {qt, kt, vt}, {y}, "attention", "kiln", 1);
    attention->attributes["scale"] = ir::Attribute::of_float(0.5f);
    g.add_node("Transpose", {y}, {out}, "merge_heads", "", 13)->attributes["perm"] = ir::Attribute::of_ints({0, 2, 1, 3});
    ir::Value* z = g.add_value("z");
    g.add_node("Neg", {out}, {z}, "neg");
    g.outputs = {z};
  }
};

size_t count_ops(const ir::Graph& g, const std::string& op) {
  size_t n = 0;
  for (const auto& node : g.nodes()) n += node->op_type == op;
  return n;
}

TEST(AttentionTransposeFolding, OperandAndOutputTransposesBecomePermutations) {
  HeadsGraph h;
  EXPECT_TRUE(changed_ok(fold_attention_transposes(h.g, fake_context())));
  ASSERT_TRUE(ir::verify(h.g).is_ok()) << ir::print_graph(h.g);
  EXPECT_EQ(count_ops(h.g, "Transpose"), 0u);
  EXPECT_EQ(h.attention->inputs, (std::vector<ir::Value*>{h.q, h.k, h.v}));
  EXPECT_EQ(h.attention->outputs[0], h.out);
  EXPECT_EQ(h.out->producer, h.attention);
  EXPECT_EQ(h.attention->attr_ints("q_perm"), (std::vector<int64_t>{0, 2, 1, 3}));
  EXPECT_EQ(h.attention->attr_ints("kt_perm"), (std::vector<int64_t>{0, 2, 3, 1}));
  EXPECT_EQ(h.attention->attr_ints("v_perm"), (std::vector<int64_t>{0, 2, 1, 3}));
  EXPECT_EQ(h.attention->attr_ints("y_perm"), (std::vector<int64_t>{0, 2, 1, 3}));
  const std::vector<std::string> origins = h.attention->source_nodes();
  EXPECT_NE(std::find(origins.begin(), origins.end(), "merge_heads"), origins.end());
  EXPECT_NE(std::find(origins.begin(), origins.end(), "kt_node"), origins.end());
}

TEST(AttentionTransposeFolding, ComposesWithPermutationsAlreadyThere) {
  HeadsGraph h;
  // Q already read through a swap of its last two axes: operand = T(T(q, p), [0,1,3,2]).
  h.attention->attributes["q_perm"] = ir::Attribute::of_ints({0, 1, 3, 2});
  h.attention->attributes["y_perm"] = ir::Attribute::of_ints({0, 1, 3, 2});
  EXPECT_TRUE(changed_ok(fold_attention_transposes(h.g, fake_context())));
  EXPECT_EQ(h.attention->attr_ints("q_perm"), (std::vector<int64_t>{0, 2, 3, 1}));   // p[q[i]]
  EXPECT_EQ(h.attention->attr_ints("y_perm"), (std::vector<int64_t>{0, 3, 1, 2}));   // q[p[i]]
}

TEST(AttentionTransposeFolding, TransposesOthersReadStay) {
  HeadsGraph h;
  ir::Value* qt = h.attention->inputs[0];
  ir::Value* also = h.g.add_value("also");
  h.g.add_node("Relu", {qt}, {also}, "other_reader");
  h.g.outputs.push_back(also);
  h.g.outputs.push_back(h.attention->outputs[0]);  // Y itself is a graph output too
  EXPECT_TRUE(changed_ok(fold_attention_transposes(h.g, fake_context())));
  ASSERT_TRUE(ir::verify(h.g).is_ok()) << ir::print_graph(h.g);
  EXPECT_EQ(h.attention->inputs[0], qt);
  EXPECT_FALSE(h.attention->has_attr("q_perm"));
  EXPECT_FALSE(h.attention->has_attr("y_perm"));
  EXPECT_EQ(count_ops(h.g, "Transpose"), 2u);  // Q's and the output's
}

}  // namespace
}  // namespace kiln::passes
