// Tests of product_fusion: on IR text, Conv + residual Add + Relu, Conv + Clip(0, 6), Conv + Add
// (residual first) + LeakyRelu, MatMul + bias + residual + Tanh and a plain Gemm + Relu each become
// one kiln.FusedConv or kiln.FusedMatMul with the residual, bias and activation as inputs and
// attributes and the nodes it replaced as origins; a conv output read twice, a Clip with run-time
// bounds, a scaled Gemm and a residual whose batch may broadcast are left alone. End to end, the
// fused graph computes exactly what the unfused graph computes.
#include "kiln/passes/product_fusion.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "kiln/session.h"
#include "passes/pass_test_util.h"
#include "support/model_builder.h"

namespace kiln::passes {
namespace {

using kiln::testing::ModelBuilder;
using kiln::testing::ScratchDir;

testing::Rewritten fused(std::string_view text) { return testing::rewrite_ir(text, fuse_products); }

// x[1,2,5,5] -> Conv(w, bias, pad 1) -> c, then the text's `rest` reading %c.
std::string conv_then(const char* inputs, const char* outputs, const char* rest) {
  return std::string("graph main (%x: float[1,2,5,5]") + inputs + ") -> (" + outputs + R"() {
    %w = constant float[2,2,3,3]
    %bias = constant float[2] [0.25,-0.5]
    %lo = constant float[] [0.0]
    %hi = constant float[] [6.0]
    %c: float[1,2,5,5] = Conv 'conv'(%x, %w, %bias) {pads=[1,1,1,1]}
    )" + rest + R"(
  })";
}

TEST(ProductFusion, ConvResidualAndReluAreOneFusedConv) {
  const testing::Rewritten r = fused(conv_then(", %r: float[1,2,5,5]", "%y", R"(%s: float[1,2,5,5] = Add 'residual'(%c, %r)
    %y: float[1,2,5,5] = Relu 'relu'(%s))"));
  EXPECT_TRUE(r.changed);
  EXPECT_EQ(r.printed,
            "graph main (%x: float[1,2,5,5], %r: float[1,2,5,5]) -> (%y: float[1,2,5,5]) {\n"
            "  %w = constant float[2,2,3,3]\n"
            "  %bias = constant float[2] [0.25,-0.5]\n"
            "  %y: float[1,2,5,5] = kiln.FusedConv 'conv'(%x, %w, %bias, %r) {activation=\"Relu\", activation_alpha=0.0, "
            "activation_beta=0.0, pads=[1,1,1,1]}\n"
            "}");
  EXPECT_EQ(testing::origins_of(r, "conv"), (std::vector<std::string>{"conv", "residual", "relu"}));
}

TEST(ProductFusion, AClipWithConstantBoundsIsTheFusedActivation) {
  const testing::Rewritten r = fused(conv_then("", "%z", "%z: float[1,2,5,5] = Clip 'clip'(%c, %lo, %hi)"));
  EXPECT_TRUE(r.changed);
  EXPECT_NE(r.printed.find("%z: float[1,2,5,5] = kiln.FusedConv 'conv'(%x, %w, %bias) {activation=\"Clip\", activation_alpha=0.0, "
                           "activation_beta=6.0, pads=[1,1,1,1]}"),
            std::string::npos)
      << r.printed;
  EXPECT_EQ(testing::origins_of(r, "conv"), (std::vector<std::string>{"conv", "clip"}));
}

TEST(ProductFusion, AClipWithRunTimeBoundsStays) {
  const testing::Rewritten r = fused(conv_then(", %top: float[]", "%z", "%z: float[1,2,5,5] = Clip 'clip'(%c, %lo, %top)"));
  EXPECT_FALSE(r.changed);
  EXPECT_NE(r.printed.find("= Conv 'conv'"), std::string::npos) << r.printed;
}

// conv's output feeds both the residual Add and the Clip, so neither folds into it.
TEST(ProductFusion, AConvOutputReadTwiceIsNotFused) {
  const testing::Rewritten r = fused(conv_then(", %r: float[1,2,5,5]", "%s, %z", R"(%s: float[1,2,5,5] = Add 'residual'(%c, %r)
    %z: float[1,2,5,5] = Clip 'clip'(%c, %lo, %hi))"));
  EXPECT_FALSE(r.changed);
  EXPECT_NE(r.printed.find("= Conv 'conv'"), std::string::npos) << r.printed;
}

// Without a bias the fused conv's bias input is omitted (_); the residual may be the Add's first
// operand.
TEST(ProductFusion, AResidualFirstAndALeakyReluFoldIntoAConvWithoutBias) {
  const testing::Rewritten r = fused(R"(graph main (%x: float[1,1,3,3], %r: float[1,1,3,3]) -> (%y) {
    %w = constant float[1,1,1,1] [2.0]
    %c: float[1,1,3,3] = Conv 'conv'(%x, %w)
    %s: float[1,1,3,3] = Add 'add'(%r, %c)
    %y: float[1,1,3,3] = LeakyRelu 'leaky'(%s) {alpha=0.2}
  })");
  EXPECT_TRUE(r.changed);
  EXPECT_EQ(r.printed,
            "graph main (%x: float[1,1,3,3], %r: float[1,1,3,3]) -> (%y: float[1,1,3,3]) {\n"
            "  %w = constant float[1,1,1,1] [2.0]\n"
            "  %y: float[1,1,3,3] = kiln.FusedConv 'conv'(%x, %w, _, %r) {activation=\"LeakyRelu\", activation_alpha=0.2, "
            "activation_beta=0.0}\n"
            "}");
  EXPECT_EQ(testing::origins_of(r, "conv"), (std::vector<std::string>{"conv", "add", "leaky"}));
}

TEST(ProductFusion, AMatMulAbsorbsItsBiasResidualAndActivation) {
  const testing::Rewritten r = fused(R"(graph main (%x: float[2,3,4], %r: float[2,3,5]) -> (%y) {
    %w = constant float[4,5]
    %b = constant float[5]
    %m: float[2,3,5] = MatMul 'matmul'(%x, %w)
    %biased: float[2,3,5] = Add 'bias'(%b, %m)
    %summed: float[2,3,5] = Add 'residual'(%biased, %r)
    %y: float[2,3,5] = Tanh 'tanh'(%summed)
  })");
  EXPECT_TRUE(r.changed);
  EXPECT_NE(r.printed.find("%y: float[2,3,5] = kiln.FusedMatMul 'matmul'(%x, %w, %b, %r) {activation=\"Tanh\", "
                           "activation_alpha=0.0, activation_beta=0.0}"),
            std::string::npos)
      << r.printed;
  EXPECT_EQ(testing::origins_of(r, "matmul"), (std::vector<std::string>{"matmul", "bias", "residual", "tanh"}));
}

// B [N=2, K=2] = [[1, 2], [3, 4]] read transposed once: [[1, 3], [2, 4]]; the bias row [1, N] as a
// vector.
TEST(ProductFusion, AGemmThatIsAPlainProductFusesLikeAMatMul) {
  const testing::Rewritten r = fused(R"(graph main (%x: float[3,2]) -> (%y) {
    %w = constant float[2,2] [1.0,2.0,3.0,4.0]
    %c = constant float[1,2] [0.5,-0.5]
    %m: float[3,2] = Gemm 'gemm'(%x, %w, %c) {transB=1}
    %y: float[3,2] = Relu 'relu'(%m)
  })");
  EXPECT_TRUE(r.changed);
  EXPECT_EQ(r.printed,
            "graph main (%x: float[3,2]) -> (%y: float[3,2]) {\n"
            "  %w_t = constant float[2,2] [1.0,3.0,2.0,4.0]\n"
            "  %c_row = constant float[2] [0.5,-0.5]\n"
            "  %y: float[3,2] = kiln.FusedMatMul 'gemm'(%x, %w_t, %c_row) {activation=\"Relu\", activation_alpha=0.0, "
            "activation_beta=0.0}\n"
            "}");
  EXPECT_EQ(testing::origins_of(r, "gemm"), (std::vector<std::string>{"gemm", "relu"}));
}

TEST(ProductFusion, AScaledGemmStays) {
  const testing::Rewritten r = fused(R"(graph main (%x: float[2,3]) -> (%y) {
    %w = constant float[3,4]
    %y: float[2,4] = Gemm 'gemm'(%x, %w) {alpha=0.5}
  })");
  EXPECT_FALSE(r.changed);
  EXPECT_NE(r.printed.find("%y: float[2,4] = Gemm 'gemm'(%x, %w) {alpha=0.5}"), std::string::npos) << r.printed;
}

// Conv -> Add(residual) over [batch, 1, 3, 3]: a named batch is one size and fuses; an unknown
// dim may broadcast, so it does not.
std::string residual_over(const std::string& type) {
  return R"(graph main (%x: )" + type + ", %r: " + type + R"() -> (%y) {
    %w = constant float[1,1,1,1] [2.0]
    %c: )" + type + R"( = Conv 'conv'(%x, %w)
    %y: )" + type + R"( = Add 'add'(%c, %r)
  })";
}

TEST(ProductFusion, AResidualWithASymbolicBatchFusesOnlyWhenTheSymbolIsNamed) {
  const testing::Rewritten named = fused(residual_over("float[batch,1,3,3]"));
  EXPECT_TRUE(named.changed);
  EXPECT_NE(named.printed.find("%y: float[batch,1,3,3] = kiln.FusedConv 'conv'(%x, %w, _, %r)\n"), std::string::npos) << named.printed;
  EXPECT_FALSE(fused(residual_over("float[?,1,3,3]")).changed);
}

constexpr int kFloat = onnx::TensorProto::FLOAT;

std::vector<float> ramp(size_t n, float scale) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = scale * static_cast<float>(static_cast<int>(i % 7) - 3);
  return v;
}

// x[1,2,5,5] -> Conv(3x3, pad 1) -> Add(x-shaped residual r) -> Relu -> y; r -> Conv -> Clip(0, 6) -> z
std::string residual_model(const ScratchDir& dir) {
  ModelBuilder b(13);
  b.input("x", kFloat, {int64_t{1}, int64_t{2}, int64_t{5}, int64_t{5}});
  b.input("r", kFloat, {int64_t{1}, int64_t{2}, int64_t{5}, int64_t{5}});
  b.output("y", kFloat, {int64_t{1}, int64_t{2}, int64_t{5}, int64_t{5}});
  b.output("z", kFloat, {int64_t{1}, int64_t{2}, int64_t{5}, int64_t{5}});
  b.float_initializer("w", {2, 2, 3, 3}, ramp(36, 0.1f));
  b.float_initializer("bias", {2}, {0.25f, -0.5f});
  b.float_initializer("lo", {}, {0.0f});
  b.float_initializer("hi", {}, {6.0f});
  ModelBuilder::ints_attribute(b.node("Conv", {"x", "w", "bias"}, {"c"}, "conv1"), "pads", {1, 1, 1, 1});
  b.node("Add", {"c", "r"}, {"s"}, "residual");
  b.node("Relu", {"s"}, {"y"}, "relu");
  ModelBuilder::ints_attribute(b.node("Conv", {"r", "w", "bias"}, {"c2"}, "conv2"), "pads", {1, 1, 1, 1});
  b.node("Clip", {"c2", "lo", "hi"}, {"z"}, "clip");
  return b.save(dir.file("model.onnx"));
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
  auto out = session.value()->run({{"x", Tensor::from_vector<float>(DType::kFloat, {1, 2, 5, 5}, ramp(50, 0.7f))},
                                   {"r", Tensor::from_vector<float>(DType::kFloat, {1, 2, 5, 5}, ramp(50, -0.3f))}});
  EXPECT_TRUE(out.is_ok()) << out.status().to_string();
  return {out.is_ok() ? out.value() : std::map<std::string, Tensor>{}, nlohmann::json::parse(session.value()->report_json())};
}

TEST(ProductFusion, FusedConvsComputeExactlyWhatTheUnfusedGraphComputes) {
  ScratchDir dir("product_fusion");
  const std::string model = residual_model(dir);
  const Ran with_fusion = run(model, true), plain = run(model, false);
  EXPECT_EQ(with_fusion.report["nodes_after_passes"], 2);  // FusedConv(residual, Relu), FusedConv(Clip) computed it
  for (const char* name : {"y", "z"}) {
    const Tensor& a = with_fusion.outputs.at(name);
    const Tensor& b = plain.outputs.at(name);
    ASSERT_EQ(a.shape(), b.shape());
    for (int64_t i = 0; i < a.element_count(); ++i) EXPECT_FLOAT_EQ(a.data<float>()[i], b.data<float>()[i]) << name << i;
  }
}

}  // namespace
}  // namespace kiln::passes
