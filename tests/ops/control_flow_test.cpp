// Tests of If, Loop and Scan: branch choice with enclosing values, loop-carried state and scan
// outputs, scan directions, and bad conditions named by node. Expected values computed by hand.
#include <gtest/gtest.h>

#include "kiln/ops/evaluate.h"
#include "kiln/ops/op_registry.h"

namespace kiln::ops {
namespace {

Tensor floats(std::vector<int64_t> shape, std::vector<float> v) { return Tensor::from_vector<float>(DType::kFloat, shape, v); }
std::vector<float> values(const Tensor& t) { return {t.data<float>(), t.data<float>() + t.element_count()}; }

// body(a, b) = a + b as a subgraph with the given input/output names.
std::shared_ptr<ir::Graph> add_body(const std::vector<std::string>& ins, const std::string& lhs, const std::string& rhs,
                                    const std::vector<std::string>& outs, const ir::Graph* parent) {
  auto g = std::make_shared<ir::Graph>("body", parent);
  for (const auto& n : ins) g->inputs.push_back(g->add_value(n, ir::TensorType{DType::kFloat, std::nullopt}));
  auto value = [&](const std::string& n) { return g->find_value(n) ? g->find_value(n) : g->add_value(n); };
  ir::Value* a = value(lhs);
  ir::Value* b = value(rhs);
  ir::Value* sum = g->add_value("sum");
  g->add_node("Add", {a, b}, {sum}, "body_add", "", 16);
  for (const auto& n : outs) g->outputs.push_back(n == "sum" ? sum : g->find_value(n));
  return g;
}

Result<std::vector<Tensor>> run(ir::Graph& g, ir::Node& node, const std::vector<const Tensor*>& inputs,
                                const ValueScope& scope = {}) {
  KILN_ASSIGN_OR_RETURN(const OpDef* def, resolve_op(OpRegistry::global(), node));
  return evaluate_node(*def, node, inputs, &scope);
}

TEST(ControlFlow, IfRunsTheChosenBranchWithEnclosingValues) {
  ir::Graph g;
  ir::Value* cond = g.add_value("cond");
  ir::Value* out = g.add_value("out");
  ir::Node* node = g.add_node("If", {cond}, {out}, "choose", "", 16);
  // then: outer_x + outer_x; else: outer_x + outer_y (both read the enclosing scope)
  node->attributes["then_branch"] = ir::Attribute::of_graph(add_body({}, "outer_x", "outer_x", {"sum"}, &g));
  node->attributes["else_branch"] = ir::Attribute::of_graph(add_body({}, "outer_x", "outer_y", {"sum"}, &g));
  const Value x = floats({2}, {1, 2}), y = floats({2}, {10, 20});
  const ValueScope scope = {{"outer_x", &x}, {"outer_y", &y}};
  Tensor yes = Tensor::from_vector<bool>(DType::kBool, {}, {true}), no = Tensor::from_vector<bool>(DType::kBool, {}, {false});
  auto then_result = run(g, *node, {&yes}, scope);
  ASSERT_TRUE(then_result.is_ok()) << then_result.status().to_string();
  EXPECT_EQ(values(then_result.value()[0]), (std::vector<float>{2, 4}));
  auto else_result = run(g, *node, {&no}, scope);
  ASSERT_TRUE(else_result.is_ok());
  EXPECT_EQ(values(else_result.value()[0]), (std::vector<float>{11, 22}));

  Tensor not_bool = floats({}, {1});
  auto bad = run(g, *node, {&not_bool}, scope);
  EXPECT_FALSE(bad.is_ok());
  EXPECT_NE(bad.status().message().find("If 'choose'"), std::string::npos) << bad.status().message();
}

TEST(ControlFlow, LoopCarriesStateAndStacksScanOutputs) {
  ir::Graph g;
  ir::Value* m = g.add_value("M");
  ir::Value* acc0 = g.add_value("acc0");
  ir::Value* acc = g.add_value("acc");
  ir::Value* history = g.add_value("history");
  ir::Node* node = g.add_node("Loop", {m, nullptr, acc0}, {acc, history}, "loop", "", 16);
  // body(i, cond, acc) -> (cond, acc + step, acc + step): step is read from the enclosing scope.
  auto body = add_body({"i", "cond_in", "acc_in"}, "acc_in", "step", {"cond_in", "sum", "sum"}, &g);
  node->attributes["body"] = ir::Attribute::of_graph(body);
  const Value step = floats({2}, {1, 10});
  Tensor trips = Tensor::from_vector<int64_t>(DType::kInt64, {}, {3});
  Tensor start = floats({2}, {0, 0});
  auto result = run(g, *node, {&trips, nullptr, &start}, {{"step", &step}});
  ASSERT_TRUE(result.is_ok()) << result.status().to_string();
  EXPECT_EQ(values(result.value()[0]), (std::vector<float>{3, 30}));
  EXPECT_EQ(result.value()[1].shape(), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(values(result.value()[1]), (std::vector<float>{1, 10, 2, 20, 3, 30}));
}

TEST(ControlFlow, LoopBodyWithWrongOutputCountIsRefusedByName) {
  ir::Graph g;
  ir::Value* m = g.add_value("M");
  ir::Value* acc0 = g.add_value("acc0");
  ir::Value* acc = g.add_value("acc");
  ir::Node* node = g.add_node("Loop", {m, nullptr, acc0}, {acc}, "short_body", "", 16);
  // One carried value needs (cond, acc) from the body; this body returns only the sum.
  node->attributes["body"] = ir::Attribute::of_graph(add_body({"i", "cond_in", "acc_in"}, "acc_in", "acc_in", {"sum"}, &g));
  Tensor trips = Tensor::from_vector<int64_t>(DType::kInt64, {}, {2});
  Tensor start = floats({2}, {1, 2});
  auto result = run(g, *node, {&trips, nullptr, &start});
  ASSERT_FALSE(result.is_ok());
  EXPECT_TRUE(result.status().code() == StatusCode::kInvalidModel || result.status().code() == StatusCode::kInvalidArgument)
      << result.status().to_string();
  EXPECT_NE(result.status().message().find("Loop 'short_body'"), std::string::npos) << result.status().message();
}

TEST(ControlFlow, ScanSumsForwardAndReverse) {
  for (int64_t direction : {0, 1}) {
    ir::Graph g;
    ir::Value* init = g.add_value("init");
    ir::Value* xs = g.add_value("xs");
    ir::Value* final_state = g.add_value("final");
    ir::Value* partials = g.add_value("partials");
    ir::Node* node = g.add_node("Scan", {init, xs}, {final_state, partials}, "scan", "", 16);
    node->attributes["body"] = ir::Attribute::of_graph(add_body({"s", "x"}, "s", "x", {"sum", "sum"}, &g));
    node->attributes["num_scan_inputs"] = ir::Attribute::of_int(1);
    node->attributes["scan_input_directions"] = ir::Attribute::of_ints({direction});
    Tensor s0 = floats({1}, {0});
    Tensor x = floats({3, 1}, {1, 2, 3});
    auto result = run(g, *node, {&s0, &x});
    ASSERT_TRUE(result.is_ok()) << result.status().to_string();
    EXPECT_EQ(values(result.value()[0]), (std::vector<float>{6}));
    // Forward partial sums 1, 3, 6; reverse reads 3, 2, 1: 3, 5, 6.
    EXPECT_EQ(values(result.value()[1]), direction ? (std::vector<float>{3, 5, 6}) : (std::vector<float>{1, 3, 6}));
  }
}

}  // namespace
}  // namespace kiln::ops
