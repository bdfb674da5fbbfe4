// Tests of winograd_selection: on IR text, which convolutions are marked (3x3 stride 1, channels
// multiples of 16, no residual, Relu at most; algorithm="winograd" is all the mark adds), that
// nothing is marked for targets without Winograd kernels or in convolutions another provider runs;
// that the cpu kernel runs Winograd only where it pays, and a marked convolution on the cpu
// provider computes what cpu_ref computes, with its reorders counted in the report; and that
// direct or Winograd is a tactic: timed once by a tuned session, then read from the timing cache,
// or left to the heuristic.
#include "kiln/passes/winograd_selection.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>

#include "kiln/providers/cpu/cpu_provider.h"
#include "kiln/providers/cpu/onednn_target.h"
#include "kiln/session.h"
#include "passes/pass_test_util.h"
#include "support/model_builder.h"
#include "support/scoped_env.h"

namespace kiln::passes {
namespace {

using kiln::testing::ModelBuilder;
using kiln::testing::ScratchDir;

std::vector<float> wave(size_t n, float scale) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = scale * std::sin(0.37f * static_cast<float>(i));
  return v;
}

struct ConvSpec {
  int64_t in = 64, out = 64, kernel = 3, stride = 1, size = 28;
  bool residual = false;
  std::string activation = "Relu";
};

// One kiln.FusedConv (layout NHWC) as the activation_layout pass leaves an NHWC region, as IR text.
std::string fused_conv_text(const ConvSpec& s) {
  const std::string out_size = std::to_string((s.size + 2 - s.kernel) / s.stride + 1);
  const std::string size = std::to_string(s.size), in = std::to_string(s.in), out = std::to_string(s.out);
  const std::string k = std::to_string(s.kernel), stride = std::to_string(s.stride);
  const std::string y_type = "float[1," + out_size + "," + out_size + "," + out + "]";
  const std::string activation = s.activation.empty() ? "" : "activation=\"" + s.activation + "\", ";
  return "graph main (%x: float[1," + size + "," + size + "," + in + "]" + (s.residual ? ", %r: " + y_type : "") + ") -> (%y) {\n" +
         "  %w = constant float[" + out + "," + in + "," + k + "," + k + "]\n" +
         "  %y: " + y_type + " = kiln.FusedConv 'conv'(%x, %w, _" + (s.residual ? ", %r" : "") + ") {" + activation +
         "layout=\"NHWC\", pads=[1,1,1,1], strides=[" + stride + "," + stride + "]}\n}";
}

PassContext winograd_context(bool target_has_winograd = true) {
  PassContext ctx = testing::fake_context();
  if (target_has_winograd) ctx.preferences.forms = {ops::GraphForm::kWinograd};
  return ctx;
}

// The algorithm the conv of `spec` is left with.
std::string selected(const ConvSpec& spec, bool target_has_winograd = true) {
  const testing::Rewritten r = testing::rewrite_ir(fused_conv_text(spec), select_winograd, winograd_context(target_has_winograd));
  const ir::Node* conv = r.graph ? testing::node_named(*r.graph, "conv") : nullptr;
  return conv ? conv->attr_string("algorithm", "direct") : "no conv";
}

TEST(WinogradSelection, AMarkedConvolutionGetsAlgorithmWinogradAndNothingElse) {
  const testing::Rewritten r = testing::rewrite_ir(fused_conv_text({.size = 8}), select_winograd, winograd_context());
  EXPECT_TRUE(r.changed);
  EXPECT_EQ(r.printed,
            "graph main (%x: float[1,8,8,64]) -> (%y: float[1,8,8,64]) {\n"
            "  %w = constant float[64,64,3,3]\n"
            "  %y: float[1,8,8,64] = kiln.FusedConv 'conv'(%x, %w, _) {activation=\"Relu\", algorithm=\"winograd\", "
            "layout=\"NHWC\", pads=[1,1,1,1], strides=[1,1]}\n"
            "}");
}

TEST(WinogradSelection, MarksOnlyConvolutionsWinogradTakesAndPaysFor) {
  EXPECT_EQ(selected({}), "winograd");
  EXPECT_EQ(selected({.in = 128, .out = 128, .size = 14}), "winograd");
  EXPECT_EQ(selected({.activation = ""}), "winograd");
  EXPECT_EQ(selected({}, false), "direct");
  EXPECT_EQ(selected({.in = 16, .out = 32, .size = 13}), "winograd");  // the kernel weighs the work
  EXPECT_EQ(selected({.in = 72, .out = 72}), "direct");                // not a multiple of 16
  EXPECT_EQ(selected({.in = 64, .out = 24}), "direct");
  EXPECT_EQ(selected({.kernel = 1}), "direct");
  EXPECT_EQ(selected({.stride = 2}), "direct");
  EXPECT_EQ(selected({.residual = true}), "direct");
  EXPECT_EQ(selected({.activation = "Sigmoid"}), "direct");
}

// Lowering a partitioned graph: a convolution another provider runs is not marked.
TEST(WinogradSelection, OnlyConvolutionsTheProviderOwnsAreMarked) {
  PassContext ctx = winograd_context();
  ctx.owned = [](const ir::Node&) { return false; };
  EXPECT_FALSE(testing::rewrite_ir(fused_conv_text({}), select_winograd, ctx).changed);
  ctx.owned = [](const ir::Node& n) { return n.name == "conv"; };
  EXPECT_TRUE(testing::rewrite_ir(fused_conv_text({}), select_winograd, ctx).changed);
}

// Whether the cpu provider made for this machine has Winograd convolutions.
bool host_has_winograd() { return providers::CpuProvider::create({target::host_target()}).value()->graph_preferences().prefers(ops::GraphForm::kWinograd); }

// Of the marked convolutions, the cpu kernel runs by Winograd (two reorders) only those with enough
// work per thread, at least 32 input channels and at least 64 output pixels.
int cpu_reorders(const ConvSpec& spec) {
  auto g = ir::parse_graph(fused_conv_text(spec));
  EXPECT_TRUE(g.is_ok()) << g.status().to_string();
  if (!g.is_ok()) return -1;
  ir::Node& conv = *g.value()->nodes()[0];
  conv.attributes["algorithm"] = ir::Attribute::of_string("winograd");
  const auto cpu = providers::CpuProvider::create({target::host_target()}).value();
  providers::PlanContext context;
  providers::PlanEvidence evidence;
  providers::KernelBuild build{context, evidence};
  EXPECT_TRUE(cpu->kernel_for(conv, build).is_ok());
  return static_cast<int>(evidence.activation_reorders());
}

TEST(WinogradSelection, CpuKernelRunsWinogradOnlyWhereItPays) {
  if (!host_has_winograd()) GTEST_SKIP() << "no Winograd kernels on this CPU";
  EXPECT_EQ(cpu_reorders({.in = 64, .out = 64, .size = 112}), 2);
  EXPECT_EQ(cpu_reorders({.in = 32, .out = 128, .size = 112}), 2);
  EXPECT_EQ(cpu_reorders({.in = 16, .out = 64, .size = 112}), 0);  // too few input channels
  EXPECT_EQ(cpu_reorders({.in = 64, .out = 64, .size = 8}), 0);     // too little work
  EXPECT_EQ(cpu_reorders({.in = 512, .out = 512, .size = 7}), 0);   // too few output pixels
}

// x[1,96,32,32] -> Conv(96, 3x3, pad 1, bias) -> Relu -> y, run on `provider` with one thread
// (enough work per thread for the cpu kernel to choose Winograd).
struct Ran {
  Tensor y;
  nlohmann::json memory;
};

Ran run_conv(const std::string& model, const std::string& provider) {
  SessionOptions options;
  options.providers = {provider};
  options.threads = 1;
  auto session = Session::load(model, options);
  EXPECT_TRUE(session.is_ok()) << session.status().to_string();
  if (!session.is_ok()) return {};
  auto out = session.value()->run({{"x", Tensor::from_vector<float>(DType::kFloat, {1, 96, 32, 32}, wave(96 * 32 * 32, 1.5f))}});
  EXPECT_TRUE(out.is_ok()) << out.status().to_string();
  return {out.is_ok() ? out.value().at("y") : Tensor{}, nlohmann::json::parse(session.value()->report_json())["memory"]};
}

// x[1,96,32,32] -> Conv(96, 3x3, pad 1, bias) -> Relu -> y in `dir`.
std::string winograd_model(const ScratchDir& dir) {
  ModelBuilder b(13);
  b.input("x", onnx::TensorProto::FLOAT, {int64_t{1}, int64_t{96}, int64_t{32}, int64_t{32}});
  b.output("y", onnx::TensorProto::FLOAT, {int64_t{1}, int64_t{96}, int64_t{32}, int64_t{32}});
  b.float_initializer("w", {96, 96, 3, 3}, wave(96 * 96 * 9, 0.05f));
  b.float_initializer("bias", {96}, wave(96, 0.3f));
  onnx::NodeProto& conv = b.node("Conv", {"x", "w", "bias"}, {"c"}, "conv");
  onnx::AttributeProto* pads = conv.add_attribute();
  pads->set_name("pads");
  pads->set_type(onnx::AttributeProto::INTS);
  for (int i = 0; i < 4; ++i) pads->add_ints(1);
  b.node("Relu", {"c"}, {"y"}, "relu");
  return b.save(dir.file("model.onnx"));
}

TEST(WinogradSelection, CpuWinogradConvolutionMatchesTheReference) {
  ScratchDir dir("winograd");
  const std::string model = winograd_model(dir);
  const Ran reference = run_conv(model, "cpu_ref"), fast = run_conv(model, "cpu");
  // 96 channels: the region runs in NCHW16c, Winograd's own layout, so the kernel reorders nothing
  // (the NHWC path, reordering at the kernel's edges, is a differential case: support/op_cases.h).
  EXPECT_EQ(fast.memory["kernel_reorders"], 0);
  EXPECT_EQ(reference.memory["kernel_reorders"], 0);
  ASSERT_EQ(fast.y.shape(), reference.y.shape());
  float scale = 1;
  for (int64_t i = 0; i < reference.y.element_count(); ++i) scale = std::max(scale, std::abs(reference.y.data<float>()[i]));
  for (int64_t i = 0; i < reference.y.element_count(); ++i)
    ASSERT_NEAR(fast.y.data<float>()[i], reference.y.data<float>()[i], 1e-5 * scale) << i;
}

// The tuning section of a tuned session on `model`, with its timing cache in `cache`.
nlohmann::json tuned(const std::string& model, const std::string& cache) {
  const kiln::testing::ScopedEnv folder("KILN_CACHE_DIR", cache);
  SessionOptions options;
  options.tune = true;
  options.threads = 1;
  auto session = Session::load(model, options);
  EXPECT_TRUE(session.is_ok()) << session.status().to_string();
  return session.is_ok() ? nlohmann::json::parse(session.value()->report_json())["tuning"] : nlohmann::json{};
}

TEST(WinogradSelection, ATunedSessionTimesDirectAndWinogradOnceThenReadsTheCache) {
  if (!host_has_winograd()) GTEST_SKIP() << "no Winograd kernels on this CPU: nothing to choose";
  ScratchDir dir("winograd_tuning");
  const std::string model = winograd_model(dir);
  const nlohmann::json first = tuned(model, dir.file("cache"));
  ASSERT_EQ(first["choices"].size(), 1u) << first.dump();
  const nlohmann::json choice = first["choices"][0];
  EXPECT_EQ(choice["source"], "measured");
  const double direct = choice["candidate_ms"]["direct"], winograd = choice["candidate_ms"]["winograd"];
  EXPECT_EQ(choice["chosen"], direct <= winograd ? "direct" : "winograd") << choice.dump();
  EXPECT_EQ(first["measured"], 1);
  EXPECT_GT(first["spent_ms"].get<double>(), 0);
  const nlohmann::json second = tuned(model, dir.file("cache"));
  EXPECT_EQ(second["choices"][0]["source"], "cache");
  EXPECT_EQ(second["choices"][0]["chosen"], choice["chosen"]);
  EXPECT_EQ(second["measured"], 0);
  EXPECT_EQ(second["spent_ms"], 0);
  EXPECT_EQ(second["cache_hits"], 1);
}

TEST(WinogradSelection, AnUntunedSessionRecordsTheHeuristicsChoice) {
  ScratchDir dir("winograd_untuned");
  SessionOptions options;
  options.threads = 1;
  auto session = Session::load(winograd_model(dir), options);
  ASSERT_TRUE(session.is_ok()) << session.status().to_string();
  const nlohmann::json tuning = nlohmann::json::parse(session.value()->report_json())["tuning"];
  EXPECT_FALSE(tuning["enabled"]);
  const size_t expected = host_has_winograd() ? 1 : 0;  // a choice only where there is one
  ASSERT_EQ(tuning["choices"].size(), expected) << tuning.dump();
  if (expected) {
    EXPECT_EQ(tuning["choices"][0]["source"], "heuristic");
    EXPECT_EQ(tuning["choices"][0]["chosen"], "winograd");  // 96 channels over 32x32 on one thread: it pays
  }
}

}  // namespace
}  // namespace kiln::passes
