// Tests of product_fusion: Conv + residual Add + Relu and Conv + Clip(0, 6) become single
// kiln.FusedConv nodes that list the nodes they replaced and compute exactly what the unfused graph
// computes; a conv output read twice, or a Clip with run-time bounds, is left alone.
#include "kiln/passes/product_fusion.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "kiln/ops/op_registry.h"
#include "kiln/session.h"
#include "support/model_builder.h"

namespace kiln::passes {
namespace {

using kiln::testing::ModelBuilder;
using kiln::testing::ScratchDir;

constexpr int kFloat = onnx::TensorProto::FLOAT;

std::vector<float> ramp(size_t n, float scale) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = scale * static_cast<float>(static_cast<int>(i % 7) - 3);
  return v;
}

// x[1,2,5,5] -> Conv(3x3, pad 1) -> Add(x-shaped residual r) -> Relu -> y; r -> Conv -> Clip(0, 6) -> z
std::string residual_model(const ScratchDir& dir, bool conv_read_twice) {
  ModelBuilder b(13);
  b.input("x", kFloat, {int64_t{1}, int64_t{2}, int64_t{5}, int64_t{5}});
  b.input("r", kFloat, {int64_t{1}, int64_t{2}, int64_t{5}, int64_t{5}});
  b.output("y", kFloat, {int64_t{1}, int64_t{2}, int64_t{5}, int64_t{5}});
  b.output("z", kFloat, {int64_t{1}, int64_t{2}, int64_t{5}, int64_t{5}});
  b.float_initializer("w", {2, 2, 3, 3}, ramp(36, 0.1f));
  b.float_initializer("bias", {2}, {0.25f, -0.5f});
  b.float_initializer("lo", {}, {0.0f});
  b.float_initializer("hi", {}, {6.0f});
  auto& conv = b.node("Conv", {"x", "w", "bias"}, {"c"}, "conv1");
  onnx::AttributeProto* pads = conv.add_attribute();
  pads->set_name("pads");
  pads->set_type(onnx::AttributeProto::INTS);
  for (int i = 0; i < 4; ++i) pads->add_ints(1);
  b.node("Add", {"c", "r"}, {"s"}, "residual");
  b.node("Relu", {"s"}, {"y"}, "relu");
  onnx::NodeProto& second = b.node("Conv", {"r", "w", "bias"}, {"c2"}, "conv2");
  second.add_attribute()->CopyFrom(*pads);
  b.node("Clip", {conv_read_twice ? "c" : "c2", "lo", "hi"}, {"z"}, "clip");
  return b.save(dir.file("model.onnx"));
}

std::map<std::string, Tensor> inputs() {
  return {{"x", Tensor::from_vector<float>(DType::kFloat, {1, 2, 5, 5}, ramp(50, 0.7f))},
          {"r", Tensor::from_vector<float>(DType::kFloat, {1, 2, 5, 5}, ramp(50, -0.3f))}};
}

struct Ran {
  std::map<std::string, Tensor> outputs;
  nlohmann::json report;
};

Ran run(const std::string& model, bool optimize) {
  SessionOptions options;
  options.providers = {"cpu_ref"};  // the pass's semantics, on the reference kernels
  options.optimize = optimize;
  auto session = Session::load(model, options);
  EXPECT_TRUE(session.is_ok()) << session.status().to_string();
  if (!session.is_ok()) return {};
  auto out = session.value()->run(inputs());
  EXPECT_TRUE(out.is_ok()) << out.status().to_string();
  return {out.is_ok() ? out.value() : std::map<std::string, Tensor>{}, nlohmann::json::parse(session.value()->report_json())};
}

TEST(ProductFusion, ResidualAndActivationsFoldIntoFusedConvsWithTheSameResults) {
  ScratchDir dir("product_fusion");
  const std::string model = residual_model(dir, false);
  const Ran fused = run(model, true), plain = run(model, false);
  EXPECT_EQ(fused.report["nodes_after_passes"], 2);  // FusedConv(residual, Relu), FusedConv(Clip)
  for (const char* name : {"y", "z"}) {
    const Tensor& a = fused.outputs.at(name);
    const Tensor& b = plain.outputs.at(name);
    ASSERT_EQ(a.shape(), b.shape());
    for (int64_t i = 0; i < a.element_count(); ++i) EXPECT_FLOAT_EQ(a.data<float>()[i], b.data<float>()[i]) << name << i;
  }
}

// Runs the pass, expecting it to leave a single node; nullptr (with a failure) otherwise.
const ir::Node* fuse_to_one_node(ir::Graph& g) {
  ops::OpRegistry registry;
  auto changed = fuse_products(g, PassContext{registry});
  EXPECT_TRUE(changed.is_ok() && changed.value());
  EXPECT_EQ(g.nodes().size(), 1u);
  return g.nodes().size() == 1 ? g.nodes()[0].get() : nullptr;
}

TEST(ProductFusion, FusedNodeRecordsItsOriginsAndPostOps) {
  ir::Graph g;
  ir::Value* x = g.add_value("x", ir::make_type(DType::kFloat, {1, 1, 3, 3}));
  ir::Value* w = g.add_constant("w", Tensor::from_vector<float>(DType::kFloat, {1, 1, 1, 1}, {2.0f}));
  ir::Value* r = g.add_value("r", ir::make_type(DType::kFloat, {1, 1, 3, 3}));
  ir::Value* c = g.add_value("c", ir::make_type(DType::kFloat, {1, 1, 3, 3}));
  ir::Value* s = g.add_value("s", ir::make_type(DType::kFloat, {1, 1, 3, 3}));
  ir::Value* y = g.add_value("y", ir::make_type(DType::kFloat, {1, 1, 3, 3}));
  g.inputs = {x, r};
  g.add_node("Conv", {x, w}, {c}, "conv", "", 11);
  g.add_node("Add", {r, c}, {s}, "add", "", 14);
  g.add_node("LeakyRelu", {s}, {y}, "leaky", "", 6)->attributes["alpha"] = ir::Attribute::of_float(0.2f);
  g.outputs = {y};
  const ir::Node* fused_node = fuse_to_one_node(g);
  ASSERT_TRUE(fused_node);
  const ir::Node& fused = *fused_node;
  EXPECT_EQ(fused.domain + "." + fused.op_type, "kiln.FusedConv");
  EXPECT_EQ(fused.source_nodes(), (std::vector<std::string>{"conv", "add", "leaky"}));
  ASSERT_EQ(fused.inputs.size(), 4u);
  EXPECT_EQ(fused.inputs[2], nullptr);
  EXPECT_EQ(fused.inputs[3], r);
  EXPECT_EQ(fused.outputs[0], y);
  EXPECT_EQ(fused.attr_string("activation"), "LeakyRelu");
  EXPECT_FLOAT_EQ(fused.attr_float("activation_alpha", 0), 0.2f);
}

TEST(ProductFusion, MatMulAbsorbsBiasResidualAndActivation) {
  ir::Graph g;
  ir::Value* x = g.add_value("x", ir::make_type(DType::kFloat, {2, 3, 4}));
  ir::Value* w = g.add_constant("w", Tensor::from_vector<float>(DType::kFloat, {4, 5}, ramp(20, 0.1f)));
  ir::Value* b = g.add_constant("b", Tensor::from_vector<float>(DType::kFloat, {5}, ramp(5, 0.2f)));
  ir::Value* r = g.add_value("r", ir::make_type(DType::kFloat, {2, 3, 5}));
  ir::Value* m = g.add_value("m", ir::make_type(DType::kFloat, {2, 3, 5}));
  ir::Value* biased = g.add_value("biased", ir::make_type(DType::kFloat, {2, 3, 5}));
  ir::Value* summed = g.add_value("summed", ir::make_type(DType::kFloat, {2, 3, 5}));
  ir::Value* y = g.add_value("y", ir::make_type(DType::kFloat, {2, 3, 5}));
  g.inputs = {x, r};
  g.add_node("MatMul", {x, w}, {m}, "matmul", "", 13);
  g.add_node("Add", {b, m}, {biased}, "bias", "", 14);  // bias first, as torch exports it
  g.add_node("Add", {biased, r}, {summed}, "residual", "", 14);
  g.add_node("Tanh", {summed}, {y}, "tanh", "", 13);
  g.outputs = {y};
  const ir::Node* fused_node = fuse_to_one_node(g);
  ASSERT_TRUE(fused_node);
  const ir::Node& fused = *fused_node;
  EXPECT_EQ(fused.domain + "." + fused.op_type, "kiln.FusedMatMul");
  EXPECT_EQ(fused.source_nodes(), (std::vector<std::string>{"matmul", "bias", "residual", "tanh"}));
  EXPECT_EQ(fused.inputs, (std::vector<ir::Value*>{x, w, b, r}));
  EXPECT_EQ(fused.attr_string("activation"), "Tanh");
}

// A plain Gemm (transB, bias row) and its Relu: one FusedMatMul reading B transposed once and the
// bias as a vector; a Gemm with alpha != 1 stays.
TEST(ProductFusion, AGemmThatIsAPlainProductFusesLikeAMatMul) {
  ir::Graph g;
  ir::Value* x = g.add_value("x", ir::make_type(DType::kFloat, {2, 3}));
  ir::Value* w = g.add_constant("w", Tensor::from_vector<float>(DType::kFloat, {4, 3}, ramp(12, 0.1f)));
  ir::Value* c = g.add_constant("c", Tensor::from_vector<float>(DType::kFloat, {1, 4}, {1, 2, 3, 4}));
  ir::Value* m = g.add_value("m", ir::make_type(DType::kFloat, {2, 4}));
  ir::Value* y = g.add_value("y", ir::make_type(DType::kFloat, {2, 4}));
  g.inputs = {x};
  g.add_node("Gemm", {x, w, c}, {m}, "gemm", "", 13)->attributes["transB"] = ir::Attribute::of_int(1);
  g.add_node("Relu", {m}, {y}, "relu", "", 14);
  g.outputs = {y};
  const float b_1_0 = w->initializer->data<float>()[3];  // w and c are dropped once nothing reads them
  const ir::Node* fused = fuse_to_one_node(g);
  ASSERT_TRUE(fused);
  EXPECT_EQ(fused->domain + "." + fused->op_type, "kiln.FusedMatMul");
  EXPECT_EQ(fused->source_nodes(), (std::vector<std::string>{"gemm", "relu"}));
  const Tensor& weights = *fused->input(1)->initializer;
  EXPECT_EQ(weights.shape(), (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(weights.data<float>()[1], b_1_0);  // B^T[0][1] = B[1][0]
  EXPECT_EQ(fused->input(2)->initializer->shape(), (std::vector<int64_t>{4}));
  EXPECT_EQ(fused->attr_string("activation"), "Relu");

  ir::Graph scaled;
  ir::Value* sx = scaled.add_value("x", ir::make_type(DType::kFloat, {2, 3}));
  ir::Value* sw = scaled.add_constant("w", Tensor::from_vector<float>(DType::kFloat, {3, 4}, ramp(12, 0.1f)));
  ir::Value* sy = scaled.add_value("y", ir::make_type(DType::kFloat, {2, 4}));
  scaled.inputs = {sx};
  scaled.add_node("Gemm", {sx, sw}, {sy}, "gemm", "", 13)->attributes["alpha"] = ir::Attribute::of_float(0.5f);
  scaled.outputs = {sy};
  EXPECT_FALSE(fuse_products(scaled, PassContext{ops::OpRegistry::global()}).value());
  EXPECT_EQ(scaled.nodes()[0]->op_type, "Gemm");
}

// Conv -> Add(residual) over [batch, 1, 3, 3]: a named batch fuses; an unknown dim may broadcast,
// so it does not.
TEST(ProductFusion, ResidualWithSymbolicBatchFusesOnlyWhenTheSymbolIsNamed) {
  for (bool named : {true, false}) {
    const ir::Dim batch = named ? ir::Dim::symbol("batch") : ir::Dim::unknown();
    const ir::TensorType t{DType::kFloat, ir::Shape({batch, 1, 3, 3})};
    ir::Graph g;
    ir::Value* x = g.add_value("x", t);
    ir::Value* w = g.add_constant("w", Tensor::from_vector<float>(DType::kFloat, {1, 1, 1, 1}, {2.0f}));
    ir::Value* r = g.add_value("r", t);
    ir::Value* c = g.add_value("c", t);
    ir::Value* y = g.add_value("y", t);
    g.inputs = {x, r};
    g.add_node("Conv", {x, w}, {c}, "conv", "", 11);
    g.add_node("Add", {c, r}, {y}, "add", "", 14);
    g.outputs = {y};
    ops::OpRegistry registry;
    auto changed = fuse_products(g, PassContext{registry});
    ASSERT_TRUE(changed.is_ok());
    EXPECT_EQ(changed.value(), named);
    EXPECT_EQ(g.nodes().size(), named ? 1u : 2u);
  }
}

TEST(ProductFusion, SharedConvOutputIsNotFused) {
  ScratchDir dir("product_fusion");
  const Ran fused = run(residual_model(dir, true), true);
  // conv1's output feeds both the residual Add and the Clip, so neither folds into conv1.
  EXPECT_GE(fused.report["nodes_after_passes"].get<int>(), 4);
}

}  // namespace
}  // namespace kiln::passes
