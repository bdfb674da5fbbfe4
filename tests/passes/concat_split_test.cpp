// Tests of concat_split: on IR text, a Conv reading a channel Concat becomes one Conv per
// concatenated input, each with its slice of the weights (the bias on the first), summed by Adds;
// a MaxPool between them (SqueezeNet's fire module) moves in front of the Concat first; a Concat
// with another reader, a Concat of another axis and weights computed at run time stay. End to end,
// the split graph (its sums fused by product_fusion) computes what the original computed on every
// provider.
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

// a[1,1,2,2], b[1,2,2,2] -> Concat(axis) -> Conv(w [2,3,1,1], bias) -> y, as IR text.
struct ConcatConv {
  const char* axis = "-3";
  const char* outputs = "%y";
  const char* weights = "%w = constant float[2,3,1,1] [1.0,2.0,3.0,4.0,5.0,6.0]";
};

std::string concat_conv(const ConcatConv& c) {
  return std::string(R"(graph main (%a: float[1,1,2,2], %b: float[1,2,2,2]) -> ()") + c.outputs + R"() {
    )" + c.weights + R"(
    %bias = constant float[2] [0.5,-0.5]
    %joined: float[1,3,2,2] = Concat 'concat'(%a, %b) {axis=)" + c.axis + R"(}
    %y: float[1,2,2,2] = Conv 'conv'(%joined, %w, %bias)
  })";
}

// Output channel o of the weights reads input channels 0 (a's) and 1, 2 (b's): [1 | 2, 3] and
// [4 | 5, 6].
TEST(ConcatSplit, AConvOverAChannelConcatIsASumOfConvsOnWeightSlices) {
  const testing::Rewritten r = testing::rewrite_ir(concat_conv({}), split_concat_convolutions);
  EXPECT_TRUE(r.changed);
  EXPECT_EQ(r.printed,
            "graph main (%a: float[1,1,2,2], %b: float[1,2,2,2]) -> (%y: float[1,2,2,2]) {\n"
            "  %bias = constant float[2] [0.5,-0.5]\n"
            "  %w_part0 = constant float[2,1,1,1] [1.0,4.0]\n"
            "  %w_part1 = constant float[2,2,1,1] [2.0,3.0,5.0,6.0]\n"
            "  %y_part0: float[1,2,2,2] = Conv 'conv_part'(%a, %w_part0, %bias)\n"
            "  %y_part1: float[1,2,2,2] = Conv 'conv_part'(%b, %w_part1)\n"
            "  %y: float[1,2,2,2] = Add 'conv_sum'(%y_part0, %y_part1)\n"
            "}");
  EXPECT_EQ(testing::origins_of(r, "conv_sum"), (std::vector<std::string>{"conv"}));
}

TEST(ConcatSplit, AConcatWithAnotherReaderStays) {
  EXPECT_FALSE(testing::rewrite_ir(concat_conv({.outputs = "%y, %joined"}), split_concat_convolutions).changed);
}

TEST(ConcatSplit, AConcatOfAnotherAxisOrWeightsComputedAtRunTimeStay) {
  EXPECT_FALSE(testing::rewrite_ir(concat_conv({.axis = "2"}), split_concat_convolutions).changed);
  const ConcatConv random_weights{.weights = "%w: float[2,3,1,1] = RandomNormal 'random'() {shape=[2,3,1,1]}"};
  EXPECT_FALSE(testing::rewrite_ir(concat_conv(random_weights), split_concat_convolutions).changed);
}

// SqueezeNet's fire module: the MaxPool is applied to each concatenated part, then the Conv splits.
TEST(ConcatSplit, APoolOfTheConcatMovesInFrontOfItAndTheConvSplits) {
  const testing::Rewritten r = testing::rewrite_ir(R"(graph main (%a: float[1,3,6,6], %b: float[1,5,6,6]) -> (%y) {
    %w = constant float[4,8,3,3]
    %joined: float[1,8,6,6] = Concat 'concat'(%a, %b) {axis=1}
    %pooled: float[1,8,3,3] = MaxPool 'pool'(%joined) {kernel_shape=[2,2], strides=[2,2]}
    %y: float[1,4,3,3] = Conv 'conv'(%pooled, %w) {pads=[1,1,1,1]}
  })",
                                                   split_concat_convolutions);
  EXPECT_TRUE(r.changed);
  EXPECT_EQ(r.printed,
            "graph main (%a: float[1,3,6,6], %b: float[1,5,6,6]) -> (%y: float[1,4,3,3]) {\n"
            "  %w_part0 = constant float[4,3,3,3]\n"
            "  %w_part1 = constant float[4,5,3,3]\n"
            "  %pooled_part0: float[1,3,3,3] = MaxPool 'pool_part'(%a) {kernel_shape=[2,2], strides=[2,2]}\n"
            "  %pooled_part1: float[1,5,3,3] = MaxPool 'pool_part'(%b) {kernel_shape=[2,2], strides=[2,2]}\n"
            "  %y_part0: float[1,4,3,3] = Conv 'conv_part'(%pooled_part0, %w_part0) {pads=[1,1,1,1]}\n"
            "  %y_part1: float[1,4,3,3] = Conv 'conv_part'(%pooled_part1, %w_part1) {pads=[1,1,1,1]}\n"
            "  %y: float[1,4,3,3] = Add 'conv_sum'(%y_part0, %y_part1)\n"
            "}");
}

constexpr int kFloat = onnx::TensorProto::FLOAT;

std::vector<float> ramp(size_t n, float scale) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = scale * static_cast<float>(static_cast<int>(i % 11) - 5);
  return v;
}

// a[1,3,6,6], b[1,5,6,6] -> Relu each -> Concat(axis 1) -> MaxPool(2x2) -> Conv(4, 3x3, pad 1, bias)
// -> Relu -> y[1,4,3,3].
std::string fire_model(const ScratchDir& dir) {
  ModelBuilder b(13);
  b.input("a", kFloat, {int64_t{1}, int64_t{3}, int64_t{6}, int64_t{6}});
  b.input("b", kFloat, {int64_t{1}, int64_t{5}, int64_t{6}, int64_t{6}});
  b.output("y", kFloat, {int64_t{1}, int64_t{4}, int64_t{3}, int64_t{3}});
  b.float_initializer("w", {4, 8, 3, 3}, ramp(288, 0.05f));
  b.float_initializer("bias", {4}, {0.25f, -0.5f, 0.125f, 1.0f});
  b.node("Relu", {"a"}, {"ra"}, "relu_a");
  b.node("Relu", {"b"}, {"rb"}, "relu_b");
  ModelBuilder::int_attribute(b.node("Concat", {"ra", "rb"}, {"joined"}, "concat"), "axis", 1);
  onnx::NodeProto& pool = b.node("MaxPool", {"joined"}, {"pooled"}, "pool");
  ModelBuilder::ints_attribute(pool, "kernel_shape", {2, 2});
  ModelBuilder::ints_attribute(pool, "strides", {2, 2});
  ModelBuilder::ints_attribute(b.node("Conv", {"pooled", "w", "bias"}, {"c"}, "conv"), "pads", {1, 1, 1, 1});
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

TEST(ConcatSplit, TheSplitGraphComputesWhatTheOriginalComputesOnEveryProvider) {
  ScratchDir dir("concat_split");
  const std::string model = fire_model(dir);
  const Ran plain = run(model, false, "cpu_ref");
  for (const std::string provider : {"cpu_ref", "cpu"}) {
    const Ran split = run(model, true, provider);
    // The results below are the split graph's: no Concat left.
    EXPECT_FALSE(split.op_types.empty()) << provider;
    for (const std::string& op : split.op_types) EXPECT_NE(op, "Concat") << provider;
    ASSERT_EQ(split.y.shape(), plain.y.shape());
    for (int64_t i = 0; i < plain.y.element_count(); ++i)
      EXPECT_NEAR(split.y.data<float>()[i], plain.y.data<float>()[i], 1e-5) << provider << " " << i;
  }
}

}  // namespace
}  // namespace kiln::passes
