// Tests of the public Session API end to end on small models written by ModelBuilder: results,
// re-planning for new shapes, the report, and every input error the API classifies.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "kiln/session.h"
#include "support/model_builder.h"

namespace kiln {
namespace {

using testing::ModelBuilder;
using testing::ScratchDir;
constexpr int kFloat = onnx::TensorProto::FLOAT;

// y[N,4] = Relu(x[N,4]) + bias
std::string relu_bias_model(const ScratchDir& dir) {
  ModelBuilder b;
  b.input("x", kFloat, {std::string("N"), int64_t{4}});
  b.output("y", kFloat, {std::string("N"), int64_t{4}});
  b.float_initializer("bias", {4}, {0.5f, -1.0f, 2.0f, 0.0f});
  b.node("Relu", {"x"}, {"r"}, "relu");
  b.node("Add", {"r", "bias"}, {"y"}, "add_bias");
  return b.save(dir.file("relu_bias.onnx"));
}

// Reference semantics throughout (control flow and sequences run on cpu_ref only).
SessionOptions reference_provider() {
  SessionOptions options;
  options.providers = {"cpu_ref"};
  return options;
}

Tensor batch(int64_t n) {
  std::vector<float> v;
  for (int64_t i = 0; i < n * 4; ++i) v.push_back(static_cast<float>(i % 3) - 1.0f);  // -1, 0, 1, ...
  return Tensor::from_vector<float>(DType::kFloat, {n, 4}, v);
}

TEST(Session, RunsAndComputesExpectedValues) {
  ScratchDir dir("session");
  auto session = Session::load(relu_bias_model(dir));
  ASSERT_TRUE(session.is_ok()) << session.status().to_string();
  auto out = session.value()->run({{"x", batch(2)}});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  const Tensor& y = out.value().at("y");
  ASSERT_EQ(y.shape(), (std::vector<int64_t>{2, 4}));
  const float bias[4] = {0.5f, -1.0f, 2.0f, 0.0f};
  const Tensor x = batch(2);
  for (int64_t i = 0; i < 8; ++i)
    EXPECT_FLOAT_EQ(y.data<float>()[i], std::max(0.0f, x.data<float>()[i]) + bias[i % 4]);
}

TEST(Session, ReplansForEachNewInputShapeAndReportsIt) {
  ScratchDir dir("session");
  auto session = Session::load(relu_bias_model(dir));
  ASSERT_TRUE(session.is_ok());
  ASSERT_TRUE(session.value()->run({{"x", batch(2)}}).is_ok());
  ASSERT_TRUE(session.value()->run({{"x", batch(5)}}).is_ok());
  ASSERT_TRUE(session.value()->run({{"x", batch(2)}}).is_ok());
  auto report = nlohmann::json::parse(session.value()->report_json());
  EXPECT_EQ(report["run"]["runs"], 3);
  EXPECT_EQ(report["execution"]["mode"], "graph");
  EXPECT_EQ(report["execution"]["variants_built"], 3);  // load-time (N=1), N=2, N=5
  EXPECT_EQ(report["execution"]["cache_hits"], 1);      // the second N=2
  EXPECT_EQ(report["memory"]["input_shapes"][0], nlohmann::json::array({5, 4}));
  EXPECT_EQ(report["model"]["inputs"][0]["type"], "float[N,4]");
  // The default cpu provider runs Relu -> Add as one fused element-wise chain.
  ASSERT_EQ(report["partition"]["nodes"].size(), 1u);
  EXPECT_EQ(report["partition"]["nodes"][0]["op"], "ElementwiseChain");
  EXPECT_EQ(report["partition"]["nodes"][0]["provider"], "cpu");
  EXPECT_EQ(report["partition"]["fallback_nodes"], 0);
  EXPECT_FALSE(report["model"]["sha256"].get<std::string>().empty());
  EXPECT_TRUE(report["passes"].is_array());
}

struct BadInputCase {
  const char* label;
  std::map<std::string, Tensor> inputs;
  const char* expected_text;
};

TEST(Session, BadInputsAreClassifiedAndNamed) {
  ScratchDir dir("session");
  auto session = Session::load(relu_bias_model(dir));
  ASSERT_TRUE(session.is_ok());
  const std::vector<BadInputCase> cases = {
      {"missing", {}, "missing input 'x'"},
      {"unknown", {{"x", batch(1)}, {"z", batch(1)}}, "unknown input 'z'"},
      {"dtype", {{"x", Tensor::allocate(DType::kInt64, {1, 4})}}, "dtype int64"},
      {"rank", {{"x", Tensor::allocate(DType::kFloat, {4})}}, "rank 1"},
      {"dim", {{"x", Tensor::allocate(DType::kFloat, {1, 5})}}, "dim 1 is 5"},
      {"undefined", {{"x", Tensor()}}, "undefined"},
  };
  for (const auto& c : cases) {
    auto out = session.value()->run(c.inputs);
    ASSERT_FALSE(out.is_ok()) << c.label;
    EXPECT_EQ(out.status().code(), StatusCode::kInvalidArgument) << c.label;
    EXPECT_NE(out.status().message().find(c.expected_text), std::string::npos) << c.label << ": " << out.status().message();
  }
}

TEST(Session, InconsistentSymbolAcrossInputsIsRejected) {
  ScratchDir dir("session");
  ModelBuilder b;
  b.input("a", kFloat, {std::string("N")}).input("b", kFloat, {std::string("N")});
  b.output("c", kFloat, {std::string("N")});
  b.node("Add", {"a", "b"}, {"c"}, "add");
  auto session = Session::load(b.save(dir.file("add.onnx")));
  ASSERT_TRUE(session.is_ok()) << session.status().to_string();
  auto out = session.value()->run({{"a", Tensor::allocate(DType::kFloat, {2})}, {"b", Tensor::allocate(DType::kFloat, {3})}});
  EXPECT_EQ(out.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(out.status().message().find("'N'"), std::string::npos) << out.status().message();
}

TEST(Session, LoadErrorsAreClassified) {
  ScratchDir dir("session");
  EXPECT_EQ(Session::load(dir.file("absent.onnx")).status().code(), StatusCode::kNotFound);

  SessionOptions bad_provider;
  bad_provider.providers = {"tpu"};
  EXPECT_EQ(Session::load(relu_bias_model(dir), bad_provider).status().code(), StatusCode::kUnsupportedTarget);

  SessionOptions bad_shape;
  bad_shape.input_shapes["nope"] = {1, 4};
  EXPECT_EQ(Session::load(relu_bias_model(dir), bad_shape).status().code(), StatusCode::kInvalidArgument);

  SessionOptions bad_threads;
  bad_threads.threads = -2;
  EXPECT_EQ(Session::load(relu_bias_model(dir), bad_threads).status().code(), StatusCode::kInvalidArgument);
}

TEST(Session, UnknownOperatorNamesOpAndNode) {
  ScratchDir dir("session");
  ModelBuilder b;
  b.input("x", kFloat, {int64_t{2}}).output("y", kFloat, {int64_t{2}});
  b.node("Frobnicate", {"x"}, {"y"}, "frob_node");
  auto session = Session::load(b.save(dir.file("unknown.onnx")));
  ASSERT_FALSE(session.is_ok());
  EXPECT_EQ(session.status().code(), StatusCode::kUnsupportedOperator);
  EXPECT_NE(session.status().message().find("Frobnicate"), std::string::npos) << session.status().message();
  EXPECT_NE(session.status().message().find("frob_node"), std::string::npos) << session.status().message();
}

TEST(Session, OpFromUnsupportedDomainIsUnsupported) {
  ScratchDir dir("session");
  ModelBuilder b;
  auto* extra = b.proto().add_opset_import();
  extra->set_domain("com.example");
  extra->set_version(1);
  b.input("x", kFloat, {int64_t{2}}).output("y", kFloat, {int64_t{2}});
  b.node("Custom", {"x"}, {"y"}, "custom_node", "com.example");
  auto session = Session::load(b.save(dir.file("domain.onnx")));
  EXPECT_EQ(session.status().code(), StatusCode::kUnsupportedOperator);
  EXPECT_NE(session.status().message().find("com.example"), std::string::npos) << session.status().message();
}

// y = If(flag) then Neg(r) else r, where r = Relu(x) is computed outside the branches: the
// branch reads an arena value of the enclosing graph, and If's outputs are sized at run time.
TEST(Session, IfBranchesReadEnclosingValues) {
  ScratchDir dir("session");
  ModelBuilder b(16);
  b.input("x", kFloat, {int64_t{3}}).input("flag", onnx::TensorProto::BOOL, {});
  b.output("y", kFloat, {int64_t{3}});
  b.node("Relu", {"x"}, {"r"}, "relu");
  onnx::NodeProto& if_node = b.node("If", {"flag"}, {"y"}, "choose");
  auto branch = [&](const std::string& name, bool negate) {
    onnx::AttributeProto* a = if_node.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::GRAPH);
    onnx::GraphProto* g = a->mutable_g();
    g->set_name(name);
    onnx::NodeProto* n = g->add_node();
    n->set_op_type(negate ? "Neg" : "Identity");
    n->set_name(name + "_op");
    n->add_input("r");
    n->add_output(name + "_out");
    auto* out = g->add_output();
    out->set_name(name + "_out");
    out->mutable_type()->mutable_tensor_type()->set_elem_type(kFloat);
    out->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(3);
  };
  branch("then_branch", true);
  branch("else_branch", false);
  auto session = Session::load(b.save(dir.file("if.onnx")), reference_provider());
  ASSERT_TRUE(session.is_ok()) << session.status().to_string();
  const Tensor x = Tensor::from_vector<float>(DType::kFloat, {3}, {-1, 2, -3});
  for (bool flag : {true, false}) {
    auto out = session.value()->run({{"x", x}, {"flag", Tensor::from_vector<bool>(DType::kBool, {}, {flag})}});
    ASSERT_TRUE(out.is_ok()) << out.status().to_string();
    const float* y = out.value().at("y").data<float>();
    EXPECT_EQ(y[1], flag ? -2.0f : 2.0f);
    EXPECT_EQ(y[0], 0.0f);
  }
}

// y = If(c) then (If(d) then t + r else t - r) else x, where r = Neg(Abs(x)) is made in the main
// graph and t = Neg(Relu(x)) in the outer then-branch: the nested branches read values of both
// enclosing scopes, whose producers an order blind to those reads would put after the readers.
TEST(Session, NestedIfReadsValuesOfEveryEnclosingScope) {
  ScratchDir dir("session");
  constexpr int kBool = onnx::TensorProto::BOOL;
  ModelBuilder b(16);
  b.input("x", kFloat, {int64_t{3}}).input("c", kBool, {}).input("d", kBool, {});
  b.output("y", kFloat, {int64_t{3}});
  b.node("Abs", {"x"}, {"a"}, "abs");
  b.node("Neg", {"a"}, {"r"}, "neg");
  onnx::NodeProto& outer = b.node("If", {"c"}, {"y"}, "outer");
  auto branch = [](onnx::NodeProto& if_node, const std::string& name, const std::string& output) {
    onnx::AttributeProto* a = if_node.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::GRAPH);
    onnx::GraphProto* g = a->mutable_g();
    g->set_name(if_node.name() + "_" + name);
    auto* out = g->add_output();
    out->set_name(output);
    out->mutable_type()->mutable_tensor_type()->set_elem_type(kFloat);
    out->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(3);
    return g;
  };
  auto node = [](onnx::GraphProto* g, const std::string& op, const std::vector<std::string>& inputs,
                 const std::string& output) -> onnx::NodeProto& {
    onnx::NodeProto* n = g->add_node();
    n->set_op_type(op);
    n->set_name(output + "_op");
    for (const auto& i : inputs) n->add_input(i);
    n->add_output(output);
    return *n;
  };
  onnx::GraphProto* then_branch = branch(outer, "then_branch", "z");
  node(then_branch, "Relu", {"x"}, "p");
  node(then_branch, "Neg", {"p"}, "t");
  onnx::NodeProto& nested = node(then_branch, "If", {"d"}, "z");
  node(branch(nested, "then_branch", "sum"), "Add", {"t", "r"}, "sum");
  node(branch(nested, "else_branch", "difference"), "Sub", {"t", "r"}, "difference");
  node(branch(outer, "else_branch", "same"), "Identity", {"x"}, "same");
  auto session = Session::load(b.save(dir.file("nested_if.onnx")), reference_provider());
  ASSERT_TRUE(session.is_ok()) << session.status().to_string();
  const Tensor x = Tensor::from_vector<float>(DType::kFloat, {3}, {-1, 2, -3});
  auto flag = [](bool v) { return Tensor::from_vector<bool>(DType::kBool, {}, {v}); };
  struct Case {
    bool c, d;
    std::vector<float> y;
  };
  for (const Case& k : {Case{true, true, {-1, -4, -3}}, Case{true, false, {1, 0, 3}}, Case{false, true, {-1, 2, -3}}}) {
    auto out = session.value()->run({{"x", x}, {"c", flag(k.c)}, {"d", flag(k.d)}});
    ASSERT_TRUE(out.is_ok()) << out.status().to_string();
    const Tensor& y = out.value().at("y");
    EXPECT_EQ(std::vector<float>(y.data<float>(), y.data<float>() + y.element_count()), k.y) << k.c << k.d;
  }
}

// seq_out = SequenceInsert(seq_in, x): sequences in and out through run_values; run() refuses.
TEST(Session, SequencesFlowThroughRunValues) {
  ScratchDir dir("session");
  ModelBuilder b(17);
  auto* in = b.graph().add_input();
  in->set_name("seq_in");
  in->mutable_type()->mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type()->set_elem_type(kFloat);
  b.input("x", kFloat, {int64_t{2}});
  auto* out = b.graph().add_output();
  out->set_name("seq_out");
  out->mutable_type()->mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type()->set_elem_type(kFloat);
  b.node("SequenceInsert", {"seq_in", "x"}, {"seq_out"}, "insert");
  auto session = Session::load(b.save(dir.file("seq.onnx")), reference_provider());
  ASSERT_TRUE(session.is_ok()) << session.status().to_string();
  const Tensor x = Tensor::from_vector<float>(DType::kFloat, {2}, {1, 2});
  auto result = session.value()->run_values({{"seq_in", Value::sequence(DType::kFloat, {x})}, {"x", x}});
  ASSERT_TRUE(result.is_ok()) << result.status().to_string();
  EXPECT_EQ(result.value().at("seq_out").elements().size(), 2u);

  auto wrong_kind = session.value()->run_values({{"seq_in", x}, {"x", x}});
  EXPECT_EQ(wrong_kind.status().code(), StatusCode::kInvalidArgument);
  auto wrong_dtype = session.value()->run_values(
      {{"seq_in", Value::sequence(DType::kInt64, {Tensor::allocate(DType::kInt64, {1})})}, {"x", x}});
  EXPECT_EQ(wrong_dtype.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(wrong_dtype.status().message().find("seq_in"), std::string::npos);
}

// cpu alone (fail closed) refuses a node cpu lacks a kernel for (a float64 convolution), naming
// node, op and the way out; allowing fallback to cpu_ref runs it there and the report lists it as
// fallback.
TEST(Session, CpuFailsClosedAndFallbackIsExplicit) {
  ScratchDir dir("session");
  ModelBuilder b(17);
  constexpr int kDouble = onnx::TensorProto::DOUBLE;
  b.input("x", kDouble, {int64_t{1}, int64_t{1}, int64_t{2}, int64_t{2}}).output("y", kDouble, {int64_t{1}, int64_t{1}, int64_t{2}, int64_t{2}});
  b.double_initializer("w", {1, 1, 1, 1}, {0.5});
  b.node("Conv", {"x", "w"}, {"y"}, "halve");
  const std::string model = b.save(dir.file("conv64.onnx"));
  SessionOptions cpu_only;
  cpu_only.providers = {"cpu"};
  auto refused = Session::load(model, cpu_only);
  ASSERT_FALSE(refused.is_ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kUnsupportedOperator);
  for (const char* text : {"halve", "Conv", "fail closed", "--allow-fallback cpu_ref"})
    EXPECT_NE(refused.status().message().find(text), std::string::npos) << text << ": " << refused.status().message();

  SessionOptions with_fallback = cpu_only;
  with_fallback.allow_fallback = {"cpu_ref"};
  auto session = Session::load(model, with_fallback);
  ASSERT_TRUE(session.is_ok()) << session.status().to_string();
  auto out = session.value()->run({{"x", Tensor::from_vector<double>(DType::kDouble, {1, 1, 2, 2}, {1, 2, -3, 4})}});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  EXPECT_EQ(out.value().at("y").data<double>()[0], 0.5);
  EXPECT_EQ(out.value().at("y").data<double>()[2], -1.5);
  const auto report = nlohmann::json::parse(session.value()->report_json());
  EXPECT_EQ(report["partition"]["fallback_nodes"], 1);
  EXPECT_EQ(report["partition"]["nodes"][0]["provider"], "cpu_ref");
}

// A graph output's declared shape is a hint, as in ONNX Runtime: inference's shape is used and
// the disagreement recorded (tests/analysis/stale_declarations_test.cpp has the exporters' cases).
TEST(Session, DeclaredOutputShapeContradictingInferenceGivesWay) {
  ScratchDir dir("session");
  ModelBuilder b;
  b.input("x", kFloat, {int64_t{2}, int64_t{3}}).output("y", kFloat, {int64_t{2}, int64_t{4}});
  b.node("Relu", {"x"}, {"y"}, "relu_bad_decl");
  auto session = Session::load(b.save(dir.file("decl.onnx")));
  ASSERT_TRUE(session.is_ok()) << session.status().to_string();
  auto out = session.value()->run({{"x", Tensor::from_vector<float>(DType::kFloat, {2, 3}, {-1, 1, -2, 2, -3, 3})}});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  EXPECT_EQ(out.value().at("y").shape(), (std::vector<int64_t>{2, 3}));
  const auto report = nlohmann::json::parse(session.value()->report_json());
  const auto& disagreements = report["analysis"]["declared_shape_disagreements"];
  ASSERT_EQ(disagreements.size(), 1u);
  EXPECT_EQ(disagreements[0]["value"], "y");
  EXPECT_EQ(disagreements[0]["declared"], "float[2,4]");
  EXPECT_EQ(disagreements[0]["used"], "float[2,3]");
}

// A signal model whose symbolic length cannot be 1 (a window of 5 samples): with no shapes given,
// the load does not refuse it for the guessed length; the first run plans for its own shape. A
// length the user gives is planned at load, and refused there when the model cannot take it.
TEST(Session, AGuessedDimThatDoesNotFitDefersThePlanToTheFirstRun) {
  ScratchDir dir("deferred_plan");
  ModelBuilder b(13);
  b.input("x", kFloat, {int64_t{1}, int64_t{1}, std::string("samples")});
  b.output("y", kFloat, {int64_t{1}, int64_t{2}, std::string("frames")});
  b.float_initializer("w", {2, 1, 5}, {1, 1, 1, 1, 1, 0, 0, 1, 0, 0});
  b.node("Conv", {"x", "w"}, {"y"}, "window");
  const std::string model = b.save(dir.file("window.onnx"));
  auto session = Session::load(model, SessionOptions{});
  ASSERT_TRUE(session.is_ok()) << session.status().to_string();
  const nlohmann::json report = nlohmann::json::parse(session.value()->report_json());
  EXPECT_NE(report["execution"]["deferred_load_plan"].get<std::string>().find("window"), std::string::npos) << report["execution"];
  std::vector<float> x(12);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i);
  auto out = session.value()->run({{"x", Tensor::from_vector<float>(DType::kFloat, {1, 1, 12}, x)}});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  const Tensor& y = out.value().at("y");
  ASSERT_EQ(y.shape(), (std::vector<int64_t>{1, 2, 8}));
  EXPECT_EQ(y.data<float>()[0], 0 + 1 + 2 + 3 + 4);
  EXPECT_EQ(y.data<float>()[8], 2);
  SessionOptions given;
  given.input_shapes = {{"x", {1, 1, 3}}};
  EXPECT_EQ(Session::load(model, given).status().code(), StatusCode::kInvalidModel);
  given.input_shapes = {{"x", {1, 1, 7}}};
  auto planned = Session::load(model, given);
  ASSERT_TRUE(planned.is_ok()) << planned.status().to_string();
  EXPECT_TRUE(nlohmann::json::parse(planned.value()->report_json())["execution"]["deferred_load_plan"].is_null());
}

}  // namespace
}  // namespace kiln
