// Tests of Gradient expansion: gradients computed by the expanded backward nodes agree with central
// finite differences of sum(y) on doubles, for every derivative rule, broadcasting in both ReduceSum
// forms (opset 12 attribute, opset 13 input), batched MatMul and xs that y does not depend on; and
// malformed or non-differentiable Gradients are refused with a classified error.
#include "kiln/autodiff/gradient_expansion.h"

#include <gtest/gtest.h>

#include <cmath>

#include "kiln/session.h"
#include "support/model_builder.h"

namespace kiln::autodiff {
namespace {

// Gradients run in double, on the reference provider.
SessionOptions reference_provider() {
  SessionOptions options;
  options.providers = {"cpu_ref"};
  return options;
}

using kiln::testing::DimSpec;
using kiln::testing::ModelBuilder;
using kiln::testing::ScratchDir;

constexpr int kDouble = onnx::TensorProto::DOUBLE;

struct ForwardNode {
  std::string op;
  std::vector<std::string> inputs;
  std::string output;
};

struct GradientCase {
  int64_t opset = 17;
  std::vector<std::pair<std::string, std::vector<int64_t>>> inputs;  // all double
  std::vector<ForwardNode> nodes;
  std::string y;
  std::vector<int64_t> y_dims;
  std::vector<std::string> xs;  // the rest of the inputs are zs
};

std::vector<DimSpec> dims_of(const std::vector<int64_t>& dims) { return {dims.begin(), dims.end()}; }

void add_strings(onnx::NodeProto& node, const std::string& name, const std::vector<std::string>& values) {
  onnx::AttributeProto* a = node.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRINGS);
  for (const std::string& v : values) a->add_strings(v);
}

// The case's forward nodes, y as an output and one Gradient node whose outputs d_<x> are outputs too.
std::string write_model(const GradientCase& c, const ScratchDir& dir, const std::vector<std::string>& gradient_inputs) {
  ModelBuilder b(c.opset);
  auto* training = b.proto().add_opset_import();
  training->set_domain("ai.onnx.preview.training");
  training->set_version(1);
  std::vector<std::string> zs;
  for (const auto& [name, dims] : c.inputs) {
    b.input(name, kDouble, dims_of(dims));
    if (std::find(c.xs.begin(), c.xs.end(), name) == c.xs.end()) zs.push_back(name);
  }
  for (const ForwardNode& n : c.nodes) b.node(n.op, n.inputs, {n.output}, n.output + "_node");
  b.output(c.y, kDouble, dims_of(c.y_dims));
  std::vector<std::string> grads;
  for (const std::string& x : c.xs) {
    grads.push_back("d_" + x);
    for (const auto& [name, dims] : c.inputs)
      if (name == x) b.output(grads.back(), kDouble, dims_of(dims));
  }
  onnx::NodeProto& g = b.node("Gradient", gradient_inputs, grads, "grad", "ai.onnx.preview.training");
  add_strings(g, "xs", c.xs);
  if (!zs.empty()) add_strings(g, "zs", zs);
  onnx::AttributeProto* y = g.add_attribute();
  y->set_name("y");
  y->set_type(onnx::AttributeProto::STRING);
  y->set_s(c.y);
  return b.save(dir.file("gradient.onnx"));
}

std::string write_model(const GradientCase& c, const ScratchDir& dir) {
  std::vector<std::string> inputs = c.xs;
  for (const auto& [name, dims] : c.inputs)
    if (std::find(c.xs.begin(), c.xs.end(), name) == c.xs.end()) inputs.push_back(name);
  return write_model(c, dir, inputs);
}

// Deterministic inputs in [0.3, 2.3): positive, so Log, Sqrt and Pow are defined, and away from 0.
std::map<std::string, Tensor> make_inputs(const GradientCase& c) {
  std::map<std::string, Tensor> inputs;
  int k = 0;
  for (const auto& [name, dims] : c.inputs) {
    Tensor t = Tensor::allocate(DType::kDouble, dims);
    for (int64_t i = 0; i < t.element_count(); ++i) t.data<double>()[i] = 0.3 + std::fmod(0.37 * (++k), 2.0);
    inputs.emplace(name, std::move(t));
  }
  return inputs;
}

double sum_of_y(Session& session, const std::map<std::string, Tensor>& inputs, const std::string& y) {
  auto out = session.run(inputs);
  EXPECT_TRUE(out.is_ok()) << out.status().to_string();
  if (!out.is_ok()) return NAN;
  double sum = 0;
  const Tensor& t = out.value().at(y);
  for (int64_t i = 0; i < t.element_count(); ++i) sum += t.data<double>()[i];
  return sum;
}

// Compares every d_<x> output with central differences of sum(y).
void expect_matches_finite_differences(const GradientCase& c) {
  ScratchDir dir("gradient");
  auto session = Session::load(write_model(c, dir), reference_provider());
  ASSERT_TRUE(session.is_ok()) << session.status().to_string();
  std::map<std::string, Tensor> inputs = make_inputs(c);
  auto out = session.value()->run(inputs);
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  constexpr double h = 1e-6;
  for (const std::string& x : c.xs) {
    const Tensor& grad = out.value().at("d_" + x);
    ASSERT_EQ(grad.shape(), inputs.at(x).shape()) << x;
    for (int64_t i = 0; i < grad.element_count(); ++i) {
      std::map<std::string, Tensor> plus = inputs, minus = inputs;
      plus[x] = inputs.at(x).clone();
      minus[x] = inputs.at(x).clone();
      plus[x].data<double>()[i] += h;
      minus[x].data<double>()[i] -= h;
      const double numeric = (sum_of_y(*session.value(), plus, c.y) - sum_of_y(*session.value(), minus, c.y)) / (2 * h);
      EXPECT_NEAR(grad.data<double>()[i], numeric, 1e-5 * std::max(1.0, std::abs(numeric))) << "d" << c.y << "/d" << x << "[" << i << "]";
    }
  }
}

GradientCase broadcast_arithmetic(int64_t opset) {
  GradientCase c;
  c.opset = opset;
  c.inputs = {{"a", {2, 3}}, {"b", {3}}, {"e", {2, 1}}};
  c.nodes = {{"Mul", {"a", "b"}, "c"}, {"Div", {"c", "e"}, "d"}, {"Sub", {"d", "a"}, "f"}, {"Add", {"f", "b"}, "y"}};
  c.y = "y";
  c.y_dims = {2, 3};
  c.xs = {"a", "b", "e"};
  return c;
}

TEST(GradientExpansion, BroadcastArithmeticWithReduceSumInput) { expect_matches_finite_differences(broadcast_arithmetic(13)); }

TEST(GradientExpansion, BroadcastArithmeticWithReduceSumAttribute) { expect_matches_finite_differences(broadcast_arithmetic(12)); }

TEST(GradientExpansion, UnaryChain) {
  GradientCase c;
  c.inputs = {{"x", {2, 3}}};
  c.nodes = {{"Sqrt", {"x"}, "s"},      {"Tanh", {"s"}, "t"},      {"Sigmoid", {"t"}, "g"}, {"Log", {"x"}, "l"},
             {"Mul", {"g", "l"}, "m"},  {"Neg", {"m"}, "n"},       {"Relu", {"n"}, "r"},    {"Identity", {"r"}, "i"},
             {"Exp", {"i"}, "y"}};
  c.y = "y";
  c.y_dims = {2, 3};
  c.xs = {"x"};
  expect_matches_finite_differences(c);
}

TEST(GradientExpansion, PowAndMatMulWithAnUndifferentiatedInput) {
  GradientCase c;
  c.inputs = {{"a", {2, 3}}, {"p", {2, 3}}, {"w", {3, 4}}};
  c.nodes = {{"Pow", {"a", "p"}, "q"}, {"MatMul", {"q", "w"}, "y"}};
  c.y = "y";
  c.y_dims = {2, 4};
  c.xs = {"a", "p"};  // w is in zs
  expect_matches_finite_differences(c);
}

TEST(GradientExpansion, BatchedMatMulAndAValueUsedTwice) {
  GradientCase c;
  c.inputs = {{"a", {2, 2, 3}}, {"w", {2, 3, 2}}};
  c.nodes = {{"MatMul", {"a", "w"}, "m"}, {"Mul", {"m", "m"}, "y"}};
  c.y = "y";
  c.y_dims = {2, 2, 2};
  c.xs = {"a", "w"};
  expect_matches_finite_differences(c);
}

TEST(GradientExpansion, XThatYDoesNotDependOnGetsZeros) {
  GradientCase c;
  c.inputs = {{"a", {2}}, {"unused", {3}}};
  c.nodes = {{"Exp", {"a"}, "y"}};
  c.y = "y";
  c.y_dims = {2};
  c.xs = {"a", "unused"};
  ScratchDir dir("gradient");
  auto session = Session::load(write_model(c, dir), reference_provider());
  ASSERT_TRUE(session.is_ok()) << session.status().to_string();
  auto out = session.value()->run(make_inputs(c));
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  const Tensor& zeros = out.value().at("d_unused");
  ASSERT_EQ(zeros.shape(), (std::vector<int64_t>{3}));
  for (int64_t i = 0; i < 3; ++i) EXPECT_EQ(zeros.data<double>()[i], 0.0);
}

Status load_status(const GradientCase& c, const std::vector<std::string>& gradient_inputs) {
  ScratchDir dir("gradient");
  auto session = Session::load(write_model(c, dir, gradient_inputs), reference_provider());
  return session.is_ok() ? Status::ok() : session.status();
}

TEST(GradientExpansion, OpWithoutDerivativeIsUnsupportedAndNamed) {
  GradientCase c;
  c.inputs = {{"x", {2}}};
  c.nodes = {{"Abs", {"x"}, "y"}};
  c.y = "y";
  c.y_dims = {2};
  c.xs = {"x"};
  const Status s = load_status(c, {"x"});
  EXPECT_EQ(s.code(), StatusCode::kUnsupportedOperator);
  EXPECT_NE(s.message().find("y_node"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("Abs"), std::string::npos) << s.message();
}

TEST(GradientExpansion, MalformedGradientIsInvalidModel) {
  GradientCase c = broadcast_arithmetic(17);
  Status s = load_status(c, {"b", "a", "e"});  // inputs must follow xs' order
  EXPECT_EQ(s.code(), StatusCode::kInvalidModel);
  EXPECT_NE(s.message().find("Gradient 'grad'"), std::string::npos) << s.message();
  c.y = "nowhere";
  c.nodes.push_back({"Identity", {"y"}, "nowhere_else"});
  s = load_status(c, {"a", "b", "e"});
  EXPECT_NE(s.code(), StatusCode::kOk);
}

}  // namespace
}  // namespace kiln::autodiff
