// Tests of batchnorm_folding: Conv (with or without bias) + BatchNormalization folds into one Conv
// computing what the pair computed; a norm whose statistics are not constants stays.
#include "kiln/passes/batchnorm_folding.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "kiln/session.h"
#include "passes/pass_test_util.h"
#include "support/model_builder.h"

namespace kiln::passes {
namespace {

using kiln::testing::ModelBuilder;
using kiln::testing::ScratchDir;

constexpr int kFloat = onnx::TensorProto::FLOAT;

std::vector<float> ramp(size_t n, float scale, float offset = 0) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = offset + scale * static_cast<float>(static_cast<int>(i % 5) - 2);
  return v;
}

// x[1,2,4,4] -> Conv(3 channels, 3x3, pad 1) -> BatchNormalization -> y; `mean_as_input` makes the
// running mean a graph input.
std::string model(const ScratchDir& dir, bool with_bias, bool mean_as_input) {
  ModelBuilder b(15);
  b.input("x", kFloat, {int64_t{1}, int64_t{2}, int64_t{4}, int64_t{4}});
  if (mean_as_input) b.input("mean", kFloat, {int64_t{3}});
  b.output("y", kFloat, {int64_t{1}, int64_t{3}, int64_t{4}, int64_t{4}});
  b.float_initializer("w", {3, 2, 3, 3}, ramp(54, 0.1f));
  b.float_initializer("bias", {3}, {0.5f, -0.25f, 1.0f});
  b.float_initializer("gamma", {3}, {1.5f, 0.5f, -2.0f});
  b.float_initializer("beta", {3}, {0.1f, 0.2f, -0.3f});
  if (!mean_as_input) b.float_initializer("mean", {3}, {0.3f, -0.1f, 0.05f});
  b.float_initializer("var", {3}, {0.9f, 1.7f, 0.4f});
  auto& conv = b.node("Conv", with_bias ? std::vector<std::string>{"x", "w", "bias"} : std::vector<std::string>{"x", "w"}, {"c"}, "conv");
  onnx::AttributeProto* pads = conv.add_attribute();
  pads->set_name("pads");
  pads->set_type(onnx::AttributeProto::INTS);
  for (int i = 0; i < 4; ++i) pads->add_ints(1);
  b.node("BatchNormalization", {"c", "gamma", "beta", "mean", "var"}, {"y"}, "bn");
  return b.save(dir.file("model.onnx"));
}

struct Ran {
  Tensor y;
  int nodes = 0;
};

Ran run(const std::string& path, bool optimize, bool mean_as_input) {
  SessionOptions options;
  options.providers = {"cpu_ref"};  // the pass's semantics, on the reference kernels
  options.optimize = optimize;
  auto session = Session::load(path, options);
  EXPECT_TRUE(session.is_ok()) << session.status().to_string();
  if (!session.is_ok()) return {};
  std::map<std::string, Tensor> inputs{{"x", Tensor::from_vector<float>(DType::kFloat, {1, 2, 4, 4}, ramp(32, 0.7f, 0.1f))}};
  if (mean_as_input) inputs["mean"] = Tensor::from_vector<float>(DType::kFloat, {3}, {0.3f, -0.1f, 0.05f});
  auto out = session.value()->run(inputs);
  EXPECT_TRUE(out.is_ok()) << out.status().to_string();
  return {out.is_ok() ? out.value().at("y") : Tensor{},
          nlohmann::json::parse(session.value()->report_json())["nodes_after_passes"].get<int>()};
}

// On IR text, with numbers to check by hand: s = gamma / sqrt(var + eps) = [0.5, 2],
// W' = W s = [1, 6], b' = (b - mean) s + beta = [0.5, -4].
TEST(BatchnormFolding, TheFoldedWeightsAndBiasOnIrText) {
  const testing::Rewritten r = testing::rewrite_ir(R"(graph main (%x: float[1,2,3,3]) -> (%y) {
    %w = constant float[2,1,1,1] [2.0,3.0]
    %b = constant float[2] [1.0,-1.0]
    %gamma = constant float[2] [1.0,2.0]
    %beta = constant float[2] [0.5,0.0]
    %mean = constant float[2] [1.0,1.0]
    %var = constant float[2] [3.0,0.0]
    %c: float[1,2,3,3] = Conv 'conv'(%x, %w, %b) {group=2}
    %y = BatchNormalization 'norm'(%c, %gamma, %beta, %mean, %var) {epsilon=1.0}
  })",
                                                   fold_batchnorms);
  EXPECT_TRUE(r.changed);
  EXPECT_EQ(r.printed,
            "graph main (%x: float[1,2,3,3]) -> (%y: undefined) {\n"
            "  %w_bn_folded = constant float[2,1,1,1] [1.0,6.0]\n"
            "  %conv_bn_bias = constant float[2] [0.5,-4.0]\n"
            "  %y: undefined = Conv 'conv'(%x, %w_bn_folded, %conv_bn_bias) {group=2}\n"
            "}");
}

TEST(BatchnormFolding, ConvAndNormBecomeOneConvWithTheSameResults) {
  for (bool with_bias : {true, false}) {
    ScratchDir dir("bn_folding");
    const std::string path = model(dir, with_bias, false);
    const Ran folded = run(path, true, false), plain = run(path, false, false);
    EXPECT_EQ(folded.nodes, 1) << with_bias;
    ASSERT_EQ(folded.y.shape(), plain.y.shape());
    for (int64_t i = 0; i < plain.y.element_count(); ++i)
      EXPECT_NEAR(folded.y.data<float>()[i], plain.y.data<float>()[i], 1e-5) << with_bias << " " << i;
  }
}

TEST(BatchnormFolding, NormWithRunTimeStatisticsStays) {
  ScratchDir dir("bn_folding");
  EXPECT_EQ(run(model(dir, true, true), true, true).nodes, 2);
}

}  // namespace
}  // namespace kiln::passes
