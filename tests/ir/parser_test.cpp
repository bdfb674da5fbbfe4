// The IR text parser: the printer's form reads back to the same graph (printed again, the same
// text), subgraphs with their reads of the enclosing scope, types left out, and refusals naming
// the line.
#include "kiln/ir/parser.h"

#include <gtest/gtest.h>

#include "kiln/ir/printer.h"
#include "kiln/ir/verifier.h"

namespace kiln::ir {
namespace {

std::unique_ptr<Graph> parsed(std::string_view text) {
  Result<std::unique_ptr<Graph>> g = parse_graph(text);
  EXPECT_TRUE(g.is_ok()) << g.status().to_string();
  return g.is_ok() ? std::move(g).value() : nullptr;
}

TEST(IrParser, ThePrintersFormReadsBackToTheSameText) {
  const std::string text =
      "graph main (%x: float[N,3], %mask: bool[?]) -> (%y: float[N,3], %idx: int64[2]) {\n"
      "  %idx = constant int64[2] [1,-1]\n"
      "  %w = constant float[3] [0.5,-2.0,1e-05]\n"
      "  %a: float[N,3] = Add 'add'(%x, %w)\n"
      "  %c: float[N,3], %d: undefined = kiln.FusedThing 'fused/0'(%a, _, %mask) "
      "{alpha=0.2, axes=[0,-1], count=3, dtypes=[\"a\",\"b\"], mode=\"linear\", scales=[1.0,0.5], value=float[2] [1.0,2.0]}\n"
      "  %y: float[N,3] = Relu(%c)\n"
      "}";
  std::unique_ptr<Graph> g = parsed(text);
  ASSERT_TRUE(g);
  EXPECT_EQ(print_graph(*g), text);
  EXPECT_TRUE(verify(*g).is_ok());
  const Node& fused = *g->nodes()[1];
  EXPECT_EQ(fused.domain, "kiln");
  EXPECT_EQ(fused.op_type, "FusedThing");
  EXPECT_EQ(fused.inputs[1], nullptr);
  EXPECT_EQ(fused.attr_float("alpha", 0), 0.2f);
  EXPECT_EQ(fused.attr_ints("axes"), (std::vector<int64_t>{0, -1}));
  EXPECT_EQ(fused.attr_string("mode"), "linear");
  EXPECT_EQ(fused.opset_version, 17);
  EXPECT_EQ(g->find_value("x")->type.shape->dims()[0], Dim::symbol("N"));
  EXPECT_EQ(g->find_value("mask")->type.shape->dims()[0], Dim::unknown());
  EXPECT_EQ(g->nodes()[2]->name, "");
}

TEST(IrParser, SubgraphsReadTheEnclosingScopeAndTypesMayBeLeftOut) {
  std::unique_ptr<Graph> g = parsed(R"(
    graph main (%c: bool[], %x: float[2]) -> (%y) {
      %y = If 'choose'(%c) {else_branch=
        graph no (%unused) -> (%n) {
          %n = Neg(%x)
        }, then_branch=
        graph yes () -> (%x) {
        }}
    })");
  ASSERT_TRUE(g);
  const Node& choose = *g->nodes()[0];
  const Graph& no = *choose.attr("else_branch")->g;
  EXPECT_EQ(no.parent(), g.get());
  const Value* outer = no.nodes()[0]->inputs[0];
  EXPECT_EQ(outer->name, "x");
  EXPECT_EQ(outer->producer, nullptr);
  EXPECT_FALSE(no.is_graph_input(outer));
  EXPECT_EQ(outer->type.to_string(), "float[2]");
  EXPECT_EQ(no.outer_scope_reads(), (std::vector<std::string>{"x"}));
  EXPECT_EQ(g->find_value("y")->type.to_string(), "undefined");
}

TEST(IrParser, ABuiltGraphPrintedReadsBackToTheSameText) {
  Graph g;
  Value* x = g.add_value("x", make_type(DType::kFloat, {2, 4}));
  g.inputs.push_back(x);
  Value* two = g.add_constant("two", Tensor::from_vector<float>(DType::kFloat, {}, {2.0f}));
  Value* y = g.add_value("y", make_type(DType::kFloat, {2, 4}));
  Node* n = g.add_node("Mul", {x, two}, {y}, "twice");
  n->attributes["note"] = Attribute::of_float(1.0f);  // a whole float stays a float
  g.outputs.push_back(y);
  const std::string text = print_graph(g);
  std::unique_ptr<Graph> back = parsed(text);
  ASSERT_TRUE(back);
  EXPECT_EQ(print_graph(*back), text);
  EXPECT_EQ(back->nodes()[0]->attr("note")->kind, Attribute::Kind::kFloat);
}

TEST(IrParser, MistakesAreRefusedNamingTheLine) {
  const auto refused = [](std::string_view text, const std::string& part) {
    Result<std::unique_ptr<Graph>> g = parse_graph(text);
    ASSERT_FALSE(g.is_ok()) << text;
    EXPECT_EQ(g.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(g.status().message().find(part), std::string::npos) << g.status().message();
  };
  refused("graph main (%x: float[2]) -> (%y) {\n  %y = Relu(%z)\n}", "line 2: expected a value defined before %z");
  refused("graph main (%x: float[2]) -> (%y) {\n  %y = Relu(%x)\n  %y = Neg(%x)\n}", "line 3: expected a new name for output %y");
  refused("graph main (%x: floaty[2]) -> (%x) {\n}", "line 1: expected a type");
  refused("graph main (%x: float[2]) -> (%y) {\n  %y = Relu(%x)\n", "'}' closing graph main");
  refused("graph main () -> (%y) {\n  %y = constant float[2] [1]\n}", "2 values for float[2]");
  refused("graph main () -> (%y) {\n}", "a node giving graph output %y");
  refused("graph main () -> () {\n} trailing", "the end of the text");
}

}  // namespace
}  // namespace kiln::ir
