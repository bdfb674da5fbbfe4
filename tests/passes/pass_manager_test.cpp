// Tests of the pass manager and the pass table: rounds until nothing changes, the per-pass log,
// disabled and unknown pass names, and the verifier catching a pass that breaks the graph.
#include "kiln/passes/pass_manager.h"

#include <gtest/gtest.h>

#include <regex>
#include <set>

#include "kiln/ir/printer.h"
#include "passes/pass_test_util.h"

namespace kiln::passes {
namespace {

using namespace testing;

// x: float[2,3,4] -> Reshape(x, Concat(Unsqueeze(Gather(Shape(x), 0)), [-1])) -> Identity -> Relu -> y,
// plus an unread Relu of x: 8 nodes, of which the Reshape and the Relu are left in the end.
void build_shape_chain(ir::Graph& g) {
  ir::Value* x = add_input(g, "x", ir::make_type(DType::kFloat, {2, 3, 4}));
  auto node = [&](const std::string& op, std::vector<ir::Value*> inputs, const std::string& out) {
    g.add_node(op, std::move(inputs), {g.add_value(out)}, op == "Relu" ? out + "_relu" : out, "", 13);
    return g.find_value(out);
  };
  ir::Value* shape = node("Shape", {x}, "shape");
  ir::Value* dim0 = node("Gather", {shape, add_int64_scalar(g, "zero", 0)}, "dim0");
  ir::Value* dim0_1d = node("Unsqueeze", {dim0, add_int64s(g, "axes", {0})}, "dim0_1d");
  ir::Value* target = node("Concat", {dim0_1d, add_int64s(g, "minus_one", {-1})}, "target");
  ir::Value* reshaped = node("Reshape", {x, target}, "reshaped");
  ir::Value* same = node("Identity", {reshaped}, "same");
  g.outputs = {node("Relu", {same}, "y")};
  node("Relu", {x}, "unread");
}

TEST(PassManager, DefaultPipelineRunsUntilARoundChangesNothing) {
  ir::Graph g;
  build_shape_chain(g);
  Result<std::vector<PassRun>> log = run_table_stage(g, fake_context(), kGraphStage, {});
  ASSERT_TRUE(log.is_ok()) << log.status().to_string();
  EXPECT_EQ(ir::print_graph(g),
            "graph main (%x: float[2,3,4]) -> (%y: undefined) {\n"
            "  %target = constant int64[2] [2,-1]\n"
            "  %reshaped: undefined = Reshape 'reshaped'(%x, %target)\n"
            "  %y: undefined = Relu 'y_relu'(%reshaped)\n"
            "}");

  std::vector<std::string> stage;  // the graph stage's passes, in table order
  for (const PassInfo& p : pass_table())
    if (p.stages & kGraphStage) stage.push_back(p.name);
  EXPECT_LT(stage.size(), pass_table().size()) << "the lowering passes run after partition, not here";
  const size_t passes = stage.size();
  ASSERT_EQ(log->size() % passes, 0u);
  const int rounds = static_cast<int>(log->size() / passes);
  EXPECT_GE(rounds, 2);
  for (size_t i = 0; i < log->size(); ++i) {
    const PassRun& run = (*log)[i];
    EXPECT_EQ(run.pass, stage[i % passes]);
    EXPECT_EQ(run.round, static_cast<int>(i / passes) + 1);
    if (i > 0) {
      EXPECT_EQ(run.nodes_before, (*log)[i - 1].nodes_after);
    }
    if (run.round == rounds) {
      EXPECT_FALSE(run.changed) << run.pass;
    }
  }
  // Round 1, by hand: dead_code_elimination drops the unread Relu (8 -> 7), identity_elimination the
  // Identity (7 -> 6), legacy_forms finds no opset 1-8 form, half_in_float has no float16 to convert,
  // shape_folding folds the Shape and the
  // Gather of its static dim (6 -> 4), constant_folding Unsqueeze and Concat (4 -> 2), and
  // common_subexpression_elimination finds nothing.
  const std::vector<std::pair<int64_t, int64_t>> round1 = {{8, 7}, {7, 6}, {6, 6}, {6, 6}, {6, 4}, {4, 2}, {2, 2}};
  for (size_t i = 0; i < round1.size(); ++i) {
    EXPECT_EQ((*log)[i].nodes_before, round1[i].first) << (*log)[i].pass;
    EXPECT_EQ((*log)[i].nodes_after, round1[i].second) << (*log)[i].pass;
    EXPECT_EQ((*log)[i].changed, round1[i].first != round1[i].second) << (*log)[i].pass;
  }
}

TEST(PassManager, DisabledPassesAreSkipped) {
  ir::Graph g;
  build_shape_chain(g);
  PipelineOptions options;
  options.disabled_passes = {"constant_folding", "identity_elimination"};
  Result<std::vector<PassRun>> log = run_table_stage(g, fake_context(), kGraphStage, options);
  ASSERT_TRUE(log.is_ok()) << log.status().to_string();
  for (const PassRun& run : *log) {
    EXPECT_NE(run.pass, "constant_folding");
    EXPECT_NE(run.pass, "identity_elimination");
  }
  // Shape and Gather folded, but the Unsqueeze/Concat chain and the Identity remain.
  EXPECT_EQ(g.nodes().size(), 5u) << ir::print_graph(g);
}

TEST(PassManager, UnknownDisabledPassNameListsTheValidOnes) {
  ir::Graph g;
  build_shape_chain(g);
  PipelineOptions options;
  options.disabled_passes = {"constant_fold"};
  Result<std::vector<PassRun>> log = run_table_stage(g, fake_context(), kGraphStage, options);
  ASSERT_FALSE(log.is_ok());
  EXPECT_EQ(log.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(log.status().message().find("unknown pass 'constant_fold'"), std::string::npos);
  for (const PassInfo& pass : pass_table())
    EXPECT_NE(log.status().message().find(pass.name), std::string::npos) << log.status().message();
  EXPECT_EQ(g.nodes().size(), 8u);  // nothing ran
}

TEST(PassManager, PassThatBreaksTheGraphIsNamedAsInternalError) {
  ir::Graph g;
  build_shape_chain(g);
  const std::vector<PassInfo> pipeline = {
      {"dead_code_elimination", "", pass_table()[0].run},
      {"break_graph", "reads a value nothing defines",
       [](ir::Graph& graph, const PassContext&) -> Result<bool> {
         graph.add_node("Relu", {graph.add_value("ghost")}, {graph.add_value("haunted")}, "victim");
         return true;
       }},
  };
  Result<std::vector<PassRun>> log = run_pipeline(g, fake_context(), pipeline, {});
  ASSERT_FALSE(log.is_ok());
  EXPECT_EQ(log.status().code(), StatusCode::kInternal);
  EXPECT_NE(log.status().message().find("pass break_graph left an invalid graph"), std::string::npos)
      << log.status().message();
  EXPECT_NE(log.status().message().find("ghost"), std::string::npos) << log.status().message();
}

TEST(PassManager, PassErrorsNameThePassAndInvalidInputIsNotBlamedOnAPass) {
  ir::Graph g;
  ir::Value* y = g.add_value("y");
  g.add_node("Fail", {add_floats(g, "c", {1})}, {y}, "broken_node");
  g.outputs = {y};
  Result<std::vector<PassRun>> log = run_table_stage(g, fake_context(), kGraphStage, {});
  ASSERT_FALSE(log.is_ok());
  const std::string expected = "pass constant_folding: constant folding Fail 'broken_node'";
  EXPECT_NE(log.status().message().find(expected), std::string::npos) << log.status().message();

  ir::Graph invalid;
  ir::Value* out = invalid.add_value("out");
  invalid.add_node("Relu", {invalid.add_value("undefined")}, {out}, "relu");
  invalid.outputs = {out};
  log = run_table_stage(invalid, fake_context(), kGraphStage, {});
  ASSERT_FALSE(log.is_ok());
  EXPECT_EQ(log.status().code(), StatusCode::kInvalidModel);
  EXPECT_NE(log.status().message().find("graph before passes"), std::string::npos) << log.status().message();
}

TEST(PassManager, RoundsAreBounded) {
  ir::Graph g;
  build_shape_chain(g);
  const std::vector<PassInfo> pipeline = {
      {"always_changes", "claims a change every time",
       [](ir::Graph&, const PassContext&) -> Result<bool> { return true; }},
  };
  PipelineOptions options;
  options.max_rounds = 3;
  Result<std::vector<PassRun>> log = run_pipeline(g, fake_context(), pipeline, options);
  ASSERT_TRUE(log.is_ok());
  ASSERT_EQ(log->size(), 3u);
  EXPECT_EQ(log->back().round, 3);
}

TEST(PassTable, NamesAreUniqueSnakeCaseWithSummaries) {
  std::set<std::string> names;
  for (const PassInfo& pass : pass_table()) {
    EXPECT_TRUE(std::regex_match(pass.name, std::regex("[a-z]+(_[a-z]+)*"))) << pass.name;
    EXPECT_FALSE(pass.summary.empty()) << pass.name;
    EXPECT_TRUE(pass.run) << pass.name;
    EXPECT_TRUE(names.insert(pass.name).second) << pass.name;
  }
  EXPECT_EQ(names, (std::set<std::string>{"constant_folding", "shape_folding", "identity_elimination",
                                          "common_subexpression_elimination", "dead_code_elimination", "product_fusion",
                                          "activation_layout", "gelu_fusion", "batchnorm_folding", "channel_shuffle_fusion",
                                          "attention_fusion", "layer_norm_fusion", "concat_split",
                                          "winograd_selection", "elementwise_chain_fusion",
                                          "unit_transpose_elimination", "attention_transpose_folding",
                                          "product_slicing", "half_in_float", "branch_inlining", "subnormal_flushing",
                                          "legacy_forms", "normalization_activation_fusion", "pad_folding"}));
}

}  // namespace
}  // namespace kiln::passes
