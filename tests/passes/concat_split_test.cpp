// Tests of concat_split: a Conv reading a channel Concat (through a MaxPool, as in SqueezeNet)
// becomes one Conv per concatenated input whose sum, fused by product_fusion, computes what the
// original graph computed on every provider; a Concat with another reader stays.
#include "kiln/passes/concat_split.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "kiln/session.h"
#include "passes/pass_test_util.h"
#include "support/model_builder.h"

namespace kiln::passes {
namespace {

using kiln::testing::ModelBuilder;
using kiln::testing::ScratchDir;
using testing::changed_ok;

constexpr int kFloat = onnx::TensorProto::FLOAT;

std::vector<float> ramp(size_t n, float scale) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = scale * static_cast<float>(static_cast<int>(i % 11) - 5);
  return v;
}

void add_ints(onnx::NodeProto& node, const std::string& name, std::vector<int64_t> values) {
  onnx::AttributeProto* a = node.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t v : values) a->add_ints(v);
}

// a[1,3,6,6], b[1,5,6,6] -> Relu each -> Concat(axis 1) -> MaxPool(2x2) -> Conv(4, 3x3, pad 1, bias)
// -> Relu -> y[1,4,3,3]; `concat_is_output` also makes the Concat a graph output.
std::string fire_model(const ScratchDir& dir, bool concat_is_output) {
  ModelBuilder b(13);
  b.input("a", kFloat, {int64_t{1}, int64_t{3}, int64_t{6}, int64_t{6}});
  b.input("b", kFloat, {int64_t{1}, int64_t{5}, int64_t{6}, int64_t{6}});
  b.output("y", kFloat, {int64_t{1}, int64_t{4}, int64_t{3}, int64_t{3}});
  if (concat_is_output) b.output("joined", kFloat, {int64_t{1}, int64_t{8}, int64_t{6}, int64_t{6}});
  b.float_initializer("w", {4, 8, 3, 3}, ramp(288, 0.05f));
  b.float_initializer("bias", {4}, {0.25f, -0.5f, 0.125f, 1.0f});
  b.node("Relu", {"a"}, {"ra"}, "relu_a");
  b.node("Relu", {"b"}, {"rb"}, "relu_b");
  onnx::NodeProto& concat = b.node("Concat", {"ra", "rb"}, {"joined"}, "concat");
  onnx::AttributeProto* axis = concat.add_attribute();
  axis->set_name("axis");
  axis->set_type(onnx::AttributeProto::INT);
  axis->set_i(1);
  onnx::NodeProto& pool = b.node("MaxPool", {"joined"}, {"pooled"}, "pool");
  add_ints(pool, "kernel_shape", {2, 2});
  add_ints(pool, "strides", {2, 2});
  onnx::NodeProto& conv = b.node("Conv", {"pooled", "w", "bias"}, {"c"}, "conv");
  add_ints(conv, "pads", {1, 1, 1, 1});
  b.node("Relu", {"c"}, {"y"}, "relu");
  return b.save(dir.file("model.onnx"));
}

struct Ran {
  Tensor y;
  std::vector<std::string> op_types;  // after the passes, from the partition map
};

Ran run(const std::string& model, bool optimize, const std::string& provider) {
  SessionOptions options;
  options.optimize = optimize;
  options.providers = {provider};
  auto session = Session::load(model, options);
  EXPECT_TRUE(session.is_ok()) << session.status().to_string();
  if (!session.is_ok()) return {};
  auto out = session.value()->run({{"a", Tensor::from_vector<float>(DType::kFloat, {1, 3, 6, 6}, ramp(108, 0.3f))},
                                   {"b", Tensor::from_vector<float>(DType::kFloat, {1, 5, 6, 6}, ramp(180, -0.2f))}});
  EXPECT_TRUE(out.is_ok()) << out.status().to_string();
  Ran ran{out.is_ok() ? out.value().at("y") : Tensor{}, {}};
  const nlohmann::json report = nlohmann::json::parse(session.value()->report_json());
  for (const auto& a : report["partition"]["nodes"])
    ran.op_types.push_back(a["op"].get<std::string>());
  return ran;
}

TEST(ConcatSplit, ConvOverPooledConcatBecomesSummedConvsWithTheSameResults) {
  ScratchDir dir("concat_split");
  const std::string model = fire_model(dir, false);
  const Ran plain = run(model, false, "cpu_ref");
  for (const std::string provider : {"cpu_ref", "cpu"}) {
    const Ran split = run(model, true, provider);
    EXPECT_FALSE(split.op_types.empty()) << provider;
    for (const std::string& op : split.op_types) EXPECT_NE(op, "Concat") << provider;
    ASSERT_EQ(split.y.shape(), plain.y.shape());
    for (int64_t i = 0; i < plain.y.element_count(); ++i)
      EXPECT_NEAR(split.y.data<float>()[i], plain.y.data<float>()[i], 1e-5) << provider << " " << i;
  }
}

TEST(ConcatSplit, ConcatWithAnotherReaderStays) {
  ScratchDir dir("concat_split");
  const Ran ran = run(fire_model(dir, true), true, "cpu_ref");
  EXPECT_NE(std::find(ran.op_types.begin(), ran.op_types.end(), "Concat"), ran.op_types.end());
}

TEST(ConcatSplit, WeightsAreSlicedByInputChannels) {
  ir::Graph g;
  ir::Value* a = testing::add_input(g, "a", ir::make_type(DType::kFloat, {1, 1, 2, 2}));
  ir::Value* b = testing::add_input(g, "b", ir::make_type(DType::kFloat, {1, 2, 2, 2}));
  ir::Value* joined = g.add_value("joined", ir::make_type(DType::kFloat, {1, 3, 2, 2}));
  ir::Value* w = g.add_constant("w", Tensor::from_vector<float>(DType::kFloat, {2, 3, 1, 1}, {1, 2, 3, 4, 5, 6}));
  ir::Value* y = g.add_value("y", ir::make_type(DType::kFloat, {1, 2, 2, 2}));
  g.add_node("Concat", {a, b}, {joined}, "concat", "", 13)->attributes["axis"] = ir::Attribute::of_int(-3);
  g.add_node("Conv", {joined, w}, {y}, "conv", "", 11);
  g.outputs = {y};
  ASSERT_TRUE(changed_ok(split_concat_convolutions(g, testing::fake_context())));
  ASSERT_EQ(g.nodes().size(), 3u);  // Conv(a), Conv(b), Add
  std::vector<std::vector<float>> slices;
  for (const auto& n : g.nodes()) {
    if (n->op_type == "Conv") slices.push_back(testing::floats_of(n->inputs[1]));
    if (n->op_type == "Add") {
      EXPECT_EQ(n->outputs[0], y);
    }
  }
  EXPECT_EQ(slices, (std::vector<std::vector<float>>{{1, 4}, {2, 3, 5, 6}}));
}

}  // namespace
}  // namespace kiln::passes
