// Tests of control flow on the cpu provider: bodies placed under the session's policy (the report's
// partition.body_nodes), lowered for the provider that holds them (a branch's 1-D convolutions
// channels-last, as in the main graph), planned and run through BodyPlans, with the reference's
// results; a body node no allowed provider runs refuses the model, naming it.
#include "kiln/runtime/body_plans.h"

#include <gtest/gtest.h>

#include <set>

#include <nlohmann/json.hpp>

#include "kiln/analysis/type_inference.h"
#include "kiln/frontend/onnx/importer.h"
#include "kiln/compiler/lowering.h"
#include "kiln/session.h"
#include "kiln/providers/registry/provider_registry.h"
#include "support/model_builder.h"
#include "support/test_target.h"

namespace kiln {
namespace {

using testing::ModelBuilder;
using testing::ScratchDir;
constexpr int kFloat = onnx::TensorProto::FLOAT;
constexpr int kBool = onnx::TensorProto::BOOL;
constexpr int kInt64 = onnx::TensorProto::INT64;

onnx::GraphProto* body(onnx::NodeProto& node, const std::string& attribute) {
  onnx::AttributeProto* a = node.add_attribute();
  a->set_name(attribute);
  a->set_type(onnx::AttributeProto::GRAPH);
  a->mutable_g()->set_name(node.name() + "_" + attribute);
  return a->mutable_g();
}

void typed(onnx::ValueInfoProto* v, const std::string& name, int elem_type, const std::vector<int64_t>& dims) {
  v->set_name(name);
  auto* t = v->mutable_type()->mutable_tensor_type();
  t->set_elem_type(elem_type);
  for (int64_t d : dims) t->mutable_shape()->add_dim()->set_dim_value(d);
}

void add(onnx::GraphProto* g, const std::string& op, const std::vector<std::string>& inputs, const std::string& output) {
  onnx::NodeProto* n = g->add_node();
  n->set_op_type(op);
  n->set_name(g->name() + "/" + output);
  for (const auto& i : inputs) n->add_input(i);
  n->add_output(output);
}

// y = If(c) then Relu(MatMul(x, w)) else `op`(x): w is an initializer of the main graph. With
// `double_conv`, the else branch is instead a float64 convolution (which only cpu_ref runs) of x
// seen as [1, 2, 1, 3] by the weights 2 * identity: 2x, cast back to float.
std::string if_model(const ScratchDir& dir, const std::string& else_op, bool double_conv = false) {
  ModelBuilder b(17);
  b.input("x", kFloat, {int64_t{2}, int64_t{3}}).input("c", kBool, {});
  b.output("y", kFloat, {int64_t{2}, int64_t{3}});
  b.float_initializer("w", {3, 3}, {1, 0, 0, 0, -1, 0, 0, 0, 2});
  onnx::NodeProto& node = b.node("If", {"c"}, {"y"}, "choose");
  onnx::GraphProto* then_branch = body(node, "then_branch");
  add(then_branch, "MatMul", {"x", "w"}, "product");
  add(then_branch, "Relu", {"product"}, "positive");
  typed(then_branch->add_output(), "positive", kFloat, {2, 3});
  onnx::GraphProto* else_branch = body(node, "else_branch");
  if (double_conv) {
    b.int64_initializer("as_image", {4}, {1, 2, 1, 3}).int64_initializer("as_matrix", {2}, {2, 3});
    b.double_initializer("twice", {2, 2, 1, 1}, {2, 0, 0, 2});
    const auto cast = [&](const std::string& in, const std::string& out, int to) {
      add(else_branch, "Cast", {in}, out);
      onnx::AttributeProto* a = else_branch->mutable_node(else_branch->node_size() - 1)->add_attribute();
      a->set_name("to");
      a->set_type(onnx::AttributeProto::INT);
      a->set_i(to);
    };
    add(else_branch, "Reshape", {"x", "as_image"}, "image");
    cast("image", "image64", onnx::TensorProto::DOUBLE);
    add(else_branch, "Conv", {"image64", "twice"}, "doubled64");
    cast("doubled64", "doubled", kFloat);
    add(else_branch, "Reshape", {"doubled", "as_matrix"}, "other");
  } else {
    add(else_branch, else_op, {"x"}, "other");
  }
  typed(else_branch->add_output(), "other", kFloat, {2, 3});
  return b.save(dir.file("if_" + else_op + ".onnx"));
}

Tensor flag(bool v) { return Tensor::from_vector<bool>(DType::kBool, {}, {v}); }

std::vector<float> values(const Tensor& t) { return std::vector<float>(t.data<float>(), t.data<float>() + t.element_count()); }

TEST(BodyPlans, IfBranchesRunOnCpuWithTheReferenceResults) {
  ScratchDir dir("body_plans");
  const std::string model = if_model(dir, "Neg");
  auto session = Session::load(model, SessionOptions{});
  ASSERT_TRUE(session.is_ok()) << session.status().to_string();
  const Tensor x = Tensor::from_vector<float>(DType::kFloat, {2, 3}, {1, 2, 3, -4, -5, 6});
  auto taken = session.value()->run({{"x", x}, {"c", flag(true)}});
  ASSERT_TRUE(taken.is_ok()) << taken.status().to_string();
  EXPECT_EQ(values(taken.value().at("y")), (std::vector<float>{1, 0, 6, 0, 5, 12}));
  auto other = session.value()->run({{"x", x}, {"c", flag(false)}});
  ASSERT_TRUE(other.is_ok()) << other.status().to_string();
  EXPECT_EQ(values(other.value().at("y")), (std::vector<float>{-1, -2, -3, 4, 5, -6}));
  const nlohmann::json partition = nlohmann::json::parse(session.value()->report_json())["partition"];
  ASSERT_EQ(partition["nodes"].size(), 1u);
  EXPECT_EQ(partition["nodes"][0]["provider"], "cpu");
  ASSERT_EQ(partition["body_nodes"].size(), 3u) << partition["body_nodes"];
  for (const auto& n : partition["body_nodes"]) EXPECT_EQ(n["provider"], "cpu") << n;
}

TEST(BodyPlans, ABodyNodeNoAllowedProviderRunsRefusesTheModelNamingIt) {
  ScratchDir dir("body_plans");
  const std::string model = if_model(dir, "Conv", true);  // cpu declines float64 convolutions
  auto refused = Session::load(model, SessionOptions{});
  ASSERT_FALSE(refused.is_ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kUnsupportedOperator);
  EXPECT_NE(refused.status().message().find("choose_else_branch/doubled64"), std::string::npos) << refused.status().message();
  SessionOptions fallback;
  fallback.allow_fallback = {"cpu_ref"};
  auto session = Session::load(model, fallback);
  ASSERT_TRUE(session.is_ok()) << session.status().to_string();
  auto out = session.value()->run({{"x", Tensor::from_vector<float>(DType::kFloat, {2, 3}, {0, 5, 1, 7, -2, 3})}, {"c", flag(false)}});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  const std::vector<float> y = values(out.value().at("y"));
  const std::vector<float> expected = {0, 10, 2, 14, -4, 6};  // 2x
  for (size_t i = 0; i < y.size(); ++i) EXPECT_NEAR(y[i], expected[i], 1e-5f) << i;
  const nlohmann::json bodies = nlohmann::json::parse(session.value()->report_json())["partition"]["body_nodes"];
  bool on_reference = false;
  for (const auto& n : bodies) on_reference = on_reference || (n["op"] == "Conv" && n["provider"] == "cpu_ref" && n["fallback"]);
  EXPECT_TRUE(on_reference) << bodies;
}

// r = Relu(If(c) then Squeeze(x, 0) else Identity(x)), x of shape [N, 4], y = r flattened. With
// `from_shape`, c is N == 1 (as exporters write for a batch of one), else the input `c`: r has no
// rank known when the model loads.
std::string rank_changing_if_model(const ScratchDir& dir, bool from_shape) {
  ModelBuilder b(17);
  b.input("x", kFloat, {std::string("N"), int64_t{4}});
  if (!from_shape) b.input("c", kBool, {});
  b.output("y", kFloat, {std::string("M")});
  b.int64_initializer("zero", {}, {0}).int64_initializer("one", {}, {1}).int64_initializer("axes", {1}, {0});
  b.int64_initializer("flat", {1}, {-1});
  if (from_shape) {
    b.node("Shape", {"x"}, {"shape"}, "shape");
    b.node("Gather", {"shape", "zero"}, {"n"}, "batch");
    b.node("Equal", {"n", "one"}, {"c"}, "single");
  }
  onnx::NodeProto& node = b.node("If", {"c"}, {"chosen"}, "choose");
  onnx::GraphProto* then_branch = body(node, "then_branch");
  then_branch->add_node()->CopyFrom([] {
    onnx::NodeProto n;
    n.set_op_type("Squeeze");
    n.set_name("squeeze");
    n.add_input("x");
    n.add_input("axes");
    n.add_output("squeezed");
    return n;
  }());
  then_branch->add_output()->set_name("squeezed");
  then_branch->mutable_output(0)->mutable_type()->mutable_tensor_type()->set_elem_type(kFloat);
  onnx::GraphProto* else_branch = body(node, "else_branch");
  add(else_branch, "Identity", {"x"}, "same");
  else_branch->add_output()->set_name("same");
  else_branch->mutable_output(0)->mutable_type()->mutable_tensor_type()->set_elem_type(kFloat);
  b.node("Relu", {"chosen"}, {"r"}, "relu");
  b.node("Reshape", {"r", "flat"}, {"y"}, "flatten");
  return b.save(dir.file(from_shape ? "squeeze_if_shape.onnx" : "squeeze_if_input.onnx"));
}

// The Relu after a rank-changing If is placed on cpu before its rank is known (partition.nodes'
// `deferred`); each plan knows the condition from its shapes, takes the branch's types, and
// builds the cpu kernel for them.
TEST(BodyPlans, NodesAfterAnIfOfShapeDerivedConditionRunOnCpuByDefault) {
  ScratchDir dir("body_plans");
  auto session = Session::load(rank_changing_if_model(dir, true), SessionOptions{});
  ASSERT_TRUE(session.is_ok()) << session.status().to_string();
  auto one = session.value()->run({{"x", Tensor::from_vector<float>(DType::kFloat, {1, 4}, {-1, 2, -3, 4})}});
  ASSERT_TRUE(one.is_ok()) << one.status().to_string();
  EXPECT_EQ(one.value().at("y").shape(), std::vector<int64_t>{4});
  EXPECT_EQ(values(one.value().at("y")), (std::vector<float>{0, 2, 0, 4}));
  auto two = session.value()->run({{"x", Tensor::from_vector<float>(DType::kFloat, {2, 4}, {-1, 2, -3, 4, 5, -6, 7, -8})}});
  ASSERT_TRUE(two.is_ok()) << two.status().to_string();
  EXPECT_EQ(two.value().at("y").shape(), std::vector<int64_t>{8});
  EXPECT_EQ(values(two.value().at("y")), (std::vector<float>{0, 2, 0, 4, 5, 0, 7, 0}));
  const nlohmann::json report = nlohmann::json::parse(session.value()->report_json());
  bool relu_deferred = false;
  for (const auto& n : report["partition"]["nodes"]) {
    EXPECT_EQ(n["provider"], "cpu") << n;
    if (n["op"] == "Relu") relu_deferred = n["deferred"].is_string();
  }
  EXPECT_TRUE(relu_deferred) << report["partition"]["nodes"];
  EXPECT_TRUE(report["partition"]["late_declines"].empty()) << report["partition"]["late_declines"];
}

// When the condition is an input's value, the plan does not know the rank either: the cpu kernel
// of the Relu after the If is built on each run for that run's shapes (and kept for the next).
TEST(BodyPlans, NodesAfterAnIfOfValueDerivedConditionRunWithKernelsBuiltOnTheRun) {
  ScratchDir dir("body_plans");
  const Tensor x = Tensor::from_vector<float>(DType::kFloat, {1, 4}, {-1, 2, -3, 4});
  auto session = Session::load(rank_changing_if_model(dir, false), SessionOptions{});
  ASSERT_TRUE(session.is_ok()) << session.status().to_string();
  for (int round = 0; round < 2; ++round) {
    auto squeezed = session.value()->run({{"x", x}, {"c", flag(true)}});
    ASSERT_TRUE(squeezed.is_ok()) << squeezed.status().to_string();
    EXPECT_EQ(values(squeezed.value().at("y")), (std::vector<float>{0, 2, 0, 4}));
    auto kept = session.value()->run({{"x", x}, {"c", flag(false)}});
    ASSERT_TRUE(kept.is_ok()) << kept.status().to_string();
    EXPECT_EQ(values(kept.value().at("y")), (std::vector<float>{0, 2, 0, 4}));
  }
  const nlohmann::json report = nlohmann::json::parse(session.value()->report_json());
  EXPECT_EQ(report["target"]["node_implementations"]["relu"], "kiln:run-time-shapes") << report["target"];
  EXPECT_TRUE(report["partition"]["late_declines"].empty()) << report["partition"]["late_declines"];
  for (const auto& n : report["partition"]["nodes"]) EXPECT_EQ(n["provider"], "cpu") << n;
}

// y = If(c) then Relu(MatMul(x, w)) else Neg(MatMul(x, w)), w [3, 512] (too large for analysis
// to copy into the bodies).
std::string wide_if_model(const ScratchDir& dir) {
  ModelBuilder b(17);
  b.input("x", kFloat, {int64_t{2}, int64_t{3}}).input("c", kBool, {});
  b.output("y", kFloat, {int64_t{2}, int64_t{512}});
  std::vector<float> w(3 * 512);
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(i % 7) - 3.0f;
  b.float_initializer("w", {3, 512}, w);
  onnx::NodeProto& node = b.node("If", {"c"}, {"y"}, "choose");
  for (const auto& [attribute, op] : {std::pair{"then_branch", "Relu"}, std::pair{"else_branch", "Neg"}}) {
    onnx::GraphProto* branch = body(node, attribute);
    add(branch, "MatMul", {"x", "w"}, std::string(attribute) + "_product");
    add(branch, op, {std::string(attribute) + "_product"}, std::string(attribute) + "_out");
    typed(branch->add_output(), std::string(attribute) + "_out", kFloat, {2, 512});
  }
  return b.save(dir.file("wide_if.onnx"));
}

// A body is compiled once: the enclosing constant it reads (w) is its own constant there, sharing
// the storage (its kernels pack it once), the session's compiler rewrites and places it, and
// enclosing values that change per run (x) are its extra inputs.
TEST(BodyPlans, EnclosingConstantsAreTheBodysOwnAndTheCompilerRunsOncePerBody) {
  ScratchDir dir("body_plans");
  auto model = frontend::import_onnx_file(wide_if_model(dir));
  ASSERT_TRUE(model.is_ok()) << model.status().to_string();
  ASSERT_TRUE(analysis::infer_types(*model.value().graph, ops::OpRegistry::global()).is_ok());
  const ir::Graph& main = *model.value().graph;
  const ir::Graph& then_branch = *main.nodes()[0]->attr("then_branch")->g;
  auto cpu = providers::make_provider("cpu", {kiln::testing::test_target()});
  ASSERT_TRUE(cpu.is_ok());
  int compiled = 0;
  const void* w_storage = main.find_value("w")->initializer->raw_data();
  const partition::FallbackPolicy policy{{"cpu"}, {}};
  const partition::ProviderList providers{cpu.value()};
  auto plans = std::make_shared<runtime::BodyPlans>(policy, providers, ops::OpRegistry::global(), [&](ir::Graph& body) {
    ++compiled;
    const ir::Value* w = body.find_value("w");
    EXPECT_TRUE(w && w->is_constant() && w->initializer->raw_data() == w_storage);
    EXPECT_EQ(body.inputs.size(), 1u);  // x
    return partition::partition_graph(body, policy, providers);
  });
  for (float scale : {1.0f, -2.0f}) {
    const Value x(Tensor::from_vector<float>(DType::kFloat, {2, 3}, {scale, 0, 0, 0, 0, 1}));
    auto out = plans->run(then_branch, {}, {{"x", &x}});
    ASSERT_TRUE(out.is_ok()) << out.status().to_string();
    const Tensor& y = out.value()[0].tensor();
    ASSERT_EQ(y.shape(), (std::vector<int64_t>{2, 512}));
    for (int64_t j = 0; j < 512; ++j) {
      EXPECT_EQ(y.data<float>()[j], std::max(0.0f, scale * (static_cast<float>(j % 7) - 3.0f))) << j;
      EXPECT_EQ(y.data<float>()[512 + j], std::max(0.0f, static_cast<float>((2 * 512 + j) % 7) - 3.0f)) << j;
    }
  }
  EXPECT_EQ(compiled, 1);
}

// y = x; repeat 3 times: y = MatMul(y, w) + 1. The body reads w from the main graph, and each
// iteration's plan is the one planned for the first (same shapes).
// y = x after 3 iterations of y <- MatMul(y, swap) + 1.
std::string loop_model(const ScratchDir& dir) {
  ModelBuilder b(17);
  b.input("x", kFloat, {int64_t{1}, int64_t{2}});
  b.output("y", kFloat, {int64_t{1}, int64_t{2}});
  b.float_initializer("w", {2, 2}, {0, 1, 1, 0});
  b.float_initializer("one", {}, {1});
  onnx::TensorProto* trips = b.graph().add_initializer();
  trips->set_name("trips");
  trips->set_data_type(kInt64);
  trips->add_int64_data(3);
  onnx::NodeProto& loop = b.node("Loop", {"trips", "", "x"}, {"y"}, "repeat");
  onnx::GraphProto* g = body(loop, "body");
  typed(g->add_input(), "i", kInt64, {});
  typed(g->add_input(), "cond_in", kBool, {});
  typed(g->add_input(), "y_in", kFloat, {1, 2});
  add(g, "Identity", {"cond_in"}, "cond_out");
  add(g, "MatMul", {"y_in", "w"}, "swapped");
  add(g, "Add", {"swapped", "one"}, "y_out");
  typed(g->add_output(), "cond_out", kBool, {});
  typed(g->add_output(), "y_out", kFloat, {1, 2});
  return b.save(dir.file("loop.onnx"));
}

TEST(BodyPlans, LoopBodyRunsOnCpuEveryIteration) {
  ScratchDir dir("body_plans");
  auto session = Session::load(loop_model(dir), SessionOptions{});
  ASSERT_TRUE(session.is_ok()) << session.status().to_string();
  auto out = session.value()->run({{"x", Tensor::from_vector<float>(DType::kFloat, {1, 2}, {10, 20})}});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  // (10, 20) -> (21, 11) -> (12, 22) -> (23, 13)
  EXPECT_EQ(values(out.value().at("y")), (std::vector<float>{23, 13}));
  const nlohmann::json partition = nlohmann::json::parse(session.value()->report_json())["partition"];
  EXPECT_EQ(partition["nodes"][0]["provider"], "cpu");
  for (const auto& n : partition["body_nodes"]) EXPECT_EQ(n["provider"], "cpu") << n;
}

// A body's kernels are in the run's kernel list, a level down under the node that ran them, once per
// kernel with the iterations counted; the Loop's own time excludes them, so no time counts twice,
// and the report's per-op times hold them.
TEST(BodyPlans, BodyKernelsAreInTheRunsKernelProfile) {
  ScratchDir dir("body_plans");
  auto session = Session::load(loop_model(dir), SessionOptions{});
  ASSERT_TRUE(session.is_ok()) << session.status().to_string();
  for (int run = 0; run < 2; ++run)  // the second run's list is the second run's alone
    ASSERT_TRUE(session.value()->run({{"x", Tensor::from_vector<float>(DType::kFloat, {1, 2}, {10, 20})}}).is_ok());
  const std::vector<KernelEvent>& kernels = session.value()->last_run_kernels();
  const KernelEvent* loop = nullptr;
  double bodies_ms = 0;
  std::set<std::string> body_ops;
  for (const KernelEvent& e : kernels) {
    if (e.op_type == "Loop") {
      loop = &e;
      continue;
    }
    EXPECT_EQ(e.depth, 1) << e.node;
    EXPECT_EQ(e.parent, "repeat") << e.node;
    EXPECT_EQ(e.calls, 3) << e.node;
    EXPECT_EQ(e.provider, "cpu") << e.node;
    if (e.op_type != "Identity") {
      EXPECT_FALSE(e.implementation.empty()) << e.node;  // from the body's own plan
    }
    EXPECT_GE(e.self_ms, 0) << e.node;
    bodies_ms += e.duration_ms;
    body_ops.insert(e.op_type);
  }
  ASSERT_NE(loop, nullptr);
  EXPECT_EQ(loop->depth, 0);
  EXPECT_EQ(loop->calls, 1);
  EXPECT_TRUE(body_ops.count("MatMul") || body_ops.count("Gemm") || body_ops.count("kiln.FusedMatMul")) << kernels.size();
  EXPECT_NEAR(loop->self_ms, loop->duration_ms - bodies_ms, 1e-9);
  EXPECT_GE(loop->self_ms, 0);
  const nlohmann::json op_times = nlohmann::json::parse(session.value()->report_json())["run"]["op_times"];
  int64_t loop_calls = 0, body_calls = 0;
  for (const auto& t : op_times) (t["op"] == "Loop" ? loop_calls : body_calls) += t["calls"].get<int64_t>();
  EXPECT_EQ(loop_calls, 2) << op_times;                                       // two runs
  EXPECT_EQ(body_calls, 2 * 3 * static_cast<int64_t>(kernels.size() - 1)) << op_times;  // each body kernel 3 times a run
}

// y = If(c) then Conv(Relu(Conv(x, w1, pad 1)), w2) else Conv(x, w3): 1-D convolutions in both
// branches, as silero's exports hold their whole network in an If on the sample rate.
std::string conv1d_if_model(const ScratchDir& dir) {
  auto wave = [](size_t n, float scale) {
    std::vector<float> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = scale * static_cast<float>(static_cast<int>((i * 7) % 13) - 6);
    return v;
  };
  ModelBuilder b(17);
  b.input("x", kFloat, {int64_t{1}, int64_t{8}, int64_t{10}}).input("c", kBool, {});
  b.output("y", kFloat, {int64_t{1}, int64_t{4}, int64_t{10}});
  b.float_initializer("w1", {16, 8, 3}, wave(16 * 8 * 3, 0.05f));
  b.float_initializer("w2", {4, 16, 1}, wave(4 * 16, 0.1f));
  b.float_initializer("w3", {4, 8, 1}, wave(4 * 8, 0.2f));
  onnx::NodeProto& node = b.node("If", {"c"}, {"y"}, "choose");
  onnx::GraphProto* then_branch = body(node, "then_branch");
  add(then_branch, "Conv", {"x", "w1"}, "wide");
  onnx::AttributeProto* pads = then_branch->mutable_node(0)->add_attribute();
  pads->set_name("pads");
  pads->set_type(onnx::AttributeProto::INTS);
  for (int64_t p : {1, 1}) pads->add_ints(p);
  add(then_branch, "Relu", {"wide"}, "positive");
  add(then_branch, "Conv", {"positive", "w2"}, "narrow");
  typed(then_branch->add_output(), "narrow", kFloat, {1, 4, 10});
  onnx::GraphProto* else_branch = body(node, "else_branch");
  add(else_branch, "Conv", {"x", "w3"}, "mixed");
  typed(else_branch->add_output(), "mixed", kFloat, {1, 4, 10});
  return b.save(dir.file("conv1d_if.onnx"));
}

// The session's bodies are lowered as its main graph is: the branch's convolutions become
// channels-last kiln.FusedConv (seen through a compiler doing what the session's does), and the
// session's results on cpu equal cpu_ref's for both branches.
TEST(BodyPlans, BodiesAreLoweredForTheProviderThatRunsThem) {
  ScratchDir dir("body_plans");
  const std::string path = conv1d_if_model(dir);
  auto model = frontend::import_onnx_file(path);
  ASSERT_TRUE(model.is_ok()) << model.status().to_string();
  ASSERT_TRUE(analysis::infer_types(*model.value().graph, ops::OpRegistry::global()).is_ok());
  const ir::Graph& then_branch = *model.value().graph->nodes()[0]->attr("then_branch")->g;
  auto cpu = providers::make_provider("cpu", {kiln::testing::test_target()});
  ASSERT_TRUE(cpu.is_ok());
  const partition::FallbackPolicy policy{{"cpu"}, {}};
  const partition::ProviderList providers{cpu.value()};
  std::vector<std::string> lowered;
  runtime::BodyPlans plans(policy, providers, ops::OpRegistry::global(), [&](ir::Graph& body) -> Result<partition::PartitionMap> {
    KILN_ASSIGN_OR_RETURN(partition::PartitionMap placed, partition::partition_graph(body, policy, providers));
    KILN_ASSIGN_OR_RETURN(auto runs, compiler::lower_for_providers(body, placed, providers, 1, {}, {ops::Precision::kFp32}));
    EXPECT_TRUE(compiler::any_changed(runs));
    for (const auto& n : body.nodes())
      if (n->op_type == "FusedConv") lowered.push_back(n->attr_string("layout"));
    return partition::partition_graph(body, policy, providers);
  });
  std::vector<float> xs(80);
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = 0.1f * static_cast<float>(static_cast<int>(i % 11) - 5);
  const Value x(Tensor::from_vector<float>(DType::kFloat, {1, 8, 10}, xs));
  auto direct = plans.run(then_branch, {}, {{"x", &x}});
  ASSERT_TRUE(direct.is_ok()) << direct.status().to_string();
  EXPECT_EQ(lowered, (std::vector<std::string>{"NHWC", "NHWC"}));

  for (bool c : {true, false}) {
    std::map<std::string, Tensor> y;
    for (const std::string provider : {"cpu_ref", "cpu"}) {
      SessionOptions options;
      options.providers = {provider};
      auto session = Session::load(path, options);
      ASSERT_TRUE(session.is_ok()) << session.status().to_string();
      auto out = session.value()->run({{"x", Tensor::from_vector<float>(DType::kFloat, {1, 8, 10}, xs)}, {"c", flag(c)}});
      ASSERT_TRUE(out.is_ok()) << out.status().to_string();
      y[provider] = out.value().at("y");
    }
    ASSERT_EQ(y["cpu"].shape(), (std::vector<int64_t>{1, 4, 10}));
    for (int64_t i = 0; i < y["cpu"].element_count(); ++i)
      EXPECT_NEAR(y["cpu"].data<float>()[i], y["cpu_ref"].data<float>()[i], 1e-5) << "branch " << c << " element " << i;
    if (c) {
      EXPECT_NEAR(y["cpu"].data<float>()[0], direct.value()[0].tensor().data<float>()[0], 1e-5);
    }
  }
}

}  // namespace
}  // namespace kiln
