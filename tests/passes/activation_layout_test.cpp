// Tests of activation_layout: each convolution region gets the first of the provider's preferred
// layouts it fits (here NCHW16c, NCHW8c, NHWC: the widest channel block that divides all its
// channel counts, else NHWC; an AVX2 provider's list has no NCHW16c); a narrow image input is read
// channels-first; reorders appear only at region edges; Concat keeps its channel axis in blocked
// layouts; BatchNormalization joins a region; and a converted model computes what the original
// computes, on cpu and cpu_ref.
#include "kiln/passes/activation_layout.h"
#include "kiln/passes/dead_code_elimination.h"

#include <gtest/gtest.h>

#include <map>

#include "kiln/session.h"
#include "passes/pass_test_util.h"
#include "support/model_builder.h"

namespace kiln::passes {
namespace {

using testing::changed_ok;

PassContext layout_context() {
  PassContext ctx = testing::fake_context();
  ctx.activation_layouts = {ops::ActivationLayout::blocked(16), ops::ActivationLayout::blocked(8),
                            ops::ActivationLayout::channels_last()};
  return ctx;
}

ir::Value* add_weights(ir::Graph& g, const std::string& name, std::vector<int64_t> dims) {
  return g.add_constant(name, Tensor::allocate(DType::kFloat, std::move(dims)));
}

// x[1,in,8,8] -> Conv(mid, 3x3, pad 1) -> Relu -> Conv(out, 1x1) -> y[1,out,8,8].
void two_convs(ir::Graph& g, int64_t in, int64_t mid, int64_t out) {
  ir::Value* x = testing::add_input(g, "x", ir::make_type(DType::kFloat, {1, in, 8, 8}));
  ir::Value* c = g.add_value("c", ir::make_type(DType::kFloat, {1, mid, 8, 8}));
  ir::Value* r = g.add_value("r", ir::make_type(DType::kFloat, {1, mid, 8, 8}));
  ir::Value* y = g.add_value("y", ir::make_type(DType::kFloat, {1, out, 8, 8}));
  g.add_node("Conv", {x, add_weights(g, "w1", {mid, in, 3, 3})}, {c}, "conv1", "", 11)->attributes["pads"] =
      ir::Attribute::of_ints({1, 1, 1, 1});
  g.add_node("Relu", {c}, {r}, "relu", "", 14);
  g.add_node("Conv", {r, add_weights(g, "w2", {out, mid, 1, 1})}, {y}, "conv2", "", 11);
  g.outputs = {y};
}

// Node counts by op once dead-code elimination has removed the reorders back that nothing reads.
std::map<std::string, int> op_counts(ir::Graph& g) {
  EXPECT_TRUE(eliminate_dead_code(g, testing::fake_context()).is_ok());
  std::map<std::string, int> counts;
  for (const auto& n : g.nodes()) ++counts[n->op_type];
  return counts;
}

std::vector<std::string> conv_layouts(const ir::Graph& g) {
  std::vector<std::string> layouts;
  for (const auto& n : g.nodes())
    if (n->op_type == "FusedConv") layouts.push_back(n->attr_string("layout") + "<-" + n->attr_string("input_layout", "same"));
  return layouts;
}

TEST(ActivationLayout, ChannelsDivisibleBySixteenRunInNCHW16c) {
  ir::Graph g;
  two_convs(g, 16, 32, 48);
  ASSERT_TRUE(changed_ok(choose_activation_layouts(g, layout_context())));
  EXPECT_EQ(conv_layouts(g), (std::vector<std::string>{"NCHW16c<-same", "NCHW16c<-same"}));
  EXPECT_EQ(op_counts(g)["Relayout"], 2);  // into the region and out of it
  EXPECT_EQ(g.outputs[0]->name, "y");
  EXPECT_EQ(g.outputs[0]->producer->op_type, "Relayout");
  EXPECT_EQ(g.outputs[0]->producer->inputs[0]->type.shape->to_string(), "[1,3,8,8,16]");
}

TEST(ActivationLayout, ChannelsDivisibleOnlyByEightRunInNCHW8c) {
  ir::Graph g;
  two_convs(g, 16, 24, 144);
  ASSERT_TRUE(changed_ok(choose_activation_layouts(g, layout_context())));
  EXPECT_EQ(conv_layouts(g), (std::vector<std::string>{"NCHW8c<-same", "NCHW8c<-same"}));
}

TEST(ActivationLayout, OtherChannelCountsRunChannelsLast) {
  ir::Graph g;
  two_convs(g, 16, 20, 16);
  ASSERT_TRUE(changed_ok(choose_activation_layouts(g, layout_context())));
  EXPECT_EQ(conv_layouts(g), (std::vector<std::string>{"NHWC<-same", "NHWC<-same"}));
  EXPECT_EQ(op_counts(g)["Transpose"], 2);
  EXPECT_EQ(op_counts(g)["Relayout"], 0);
}

TEST(ActivationLayout, AnImageInputIsReadChannelsFirstWithoutAReorder) {
  ir::Graph g;
  two_convs(g, 3, 32, 16);
  ASSERT_TRUE(changed_ok(choose_activation_layouts(g, layout_context())));
  EXPECT_EQ(conv_layouts(g), (std::vector<std::string>{"NCHW16c<-NCHW", "NCHW16c<-same"}));
  EXPECT_EQ(op_counts(g)["Relayout"], 1);  // out of the region only
}

TEST(ActivationLayout, EachRegionChoosesItsOwnLayout) {
  ir::Graph g;
  two_convs(g, 16, 32, 32);
  // A second region after a Softmax (not layout-agnostic): 20 channels, so NHWC.
  ir::Value* s = g.add_value("s", ir::make_type(DType::kFloat, {1, 32, 8, 8}));
  ir::Value* z = g.add_value("z", ir::make_type(DType::kFloat, {1, 20, 8, 8}));
  g.add_node("Softmax", {g.outputs[0]}, {s}, "softmax", "", 13);
  g.add_node("Conv", {s, add_weights(g, "w3", {20, 32, 1, 1})}, {z}, "conv3", "", 11);
  g.outputs = {z};
  ASSERT_TRUE(changed_ok(choose_activation_layouts(g, layout_context())));
  EXPECT_EQ(conv_layouts(g), (std::vector<std::string>{"NCHW16c<-same", "NCHW16c<-same", "NHWC<-same"}));
}

TEST(ActivationLayout, ConcatKeepsTheChannelAxisInBlockedLayouts) {
  ir::Graph g;
  ir::Value* a = testing::add_input(g, "a", ir::make_type(DType::kFloat, {1, 16, 4, 4}));
  ir::Value* ca = g.add_value("ca", ir::make_type(DType::kFloat, {1, 8, 4, 4}));
  ir::Value* cb = g.add_value("cb", ir::make_type(DType::kFloat, {1, 16, 4, 4}));
  ir::Value* joined = g.add_value("joined", ir::make_type(DType::kFloat, {1, 24, 4, 4}));
  g.add_node("Conv", {a, add_weights(g, "wa", {8, 16, 1, 1})}, {ca}, "conv_a", "", 11);
  g.add_node("Conv", {a, add_weights(g, "wb", {16, 16, 1, 1})}, {cb}, "conv_b", "", 11);
  g.add_node("Concat", {ca, cb}, {joined}, "concat", "", 13)->attributes["axis"] = ir::Attribute::of_int(-3);
  g.outputs = {joined};
  ASSERT_TRUE(changed_ok(choose_activation_layouts(g, layout_context())));
  for (const auto& n : g.nodes())
    if (n->op_type == "Concat") {
      EXPECT_EQ(n->attr_int("axis", -1), 1);
      EXPECT_EQ(n->outputs[0]->type.shape->to_string(), "[1,3,4,4,8]");
    }
  EXPECT_EQ(op_counts(g)["Relayout"], 2);  // `a` reordered once for both convolutions, and the output
}

// A region a block does not fit as a whole: its connected part of at least two convolutions the
// block fits runs blocked, the rest channels-last, a lone fitting convolution with the rest.
// x[16] -> conv1 -> [20] -> conv2 -> [32] -> conv3 -> [32] -> conv4 -> [48] -> Relu -> conv5 -> [20]
TEST(ActivationLayout, TheBlockedPartsOfARegionRunBlocked) {
  ir::Graph g;
  const std::vector<int64_t> channels = {16, 20, 32, 32, 48, 20};
  ir::Value* v = testing::add_input(g, "x", ir::make_type(DType::kFloat, {1, 16, 6, 6}));
  for (size_t i = 1; i < channels.size(); ++i) {
    if (i == 5) {
      ir::Value* r = g.add_value("r", v->type);
      g.add_node("Relu", {v}, {r}, "relu", "", 14);
      v = r;
    }
    ir::Value* out = g.add_value("c" + std::to_string(i), ir::make_type(DType::kFloat, {1, channels[i], 6, 6}));
    g.add_node("Conv", {v, add_weights(g, "w" + std::to_string(i), {channels[i], channels[i - 1], 1, 1})}, {out},
               "conv" + std::to_string(i), "", 11);
    v = out;
  }
  g.outputs = {v};
  ASSERT_TRUE(changed_ok(choose_activation_layouts(g, layout_context())));
  // conv1 (16 -> 20) and conv5 (48 -> 20) fit no block; conv2 (20 -> 32) reads 20 channels.
  EXPECT_EQ(conv_layouts(g),
            (std::vector<std::string>{"NHWC<-same", "NHWC<-same", "NCHW16c<-same", "NCHW16c<-same", "NHWC<-same"}));
}

// 1-D convolutions (3-d tensors, silero's): channels-last only, even where a block divides every
// channel count; the reorders are Transposes [0,2,1]; a Concat of channels takes the last axis. A
// 1-D pool does not start a region.
TEST(ActivationLayout, OneDimensionalConvolutionsRunChannelsLastOnly) {
  ir::Graph g;
  ir::Value* x = testing::add_input(g, "x", ir::make_type(DType::kFloat, {1, 16, 12}));
  ir::Value* c1 = g.add_value("c1", ir::make_type(DType::kFloat, {1, 32, 12}));
  ir::Value* r = g.add_value("r", ir::make_type(DType::kFloat, {1, 32, 12}));
  ir::Value* c2 = g.add_value("c2", ir::make_type(DType::kFloat, {1, 16, 12}));
  ir::Value* joined = g.add_value("joined", ir::make_type(DType::kFloat, {1, 48, 12}));
  ir::Value* pooled = g.add_value("pooled", ir::make_type(DType::kFloat, {1, 48, 6}));
  g.add_node("Conv", {x, add_weights(g, "w1", {32, 16, 3})}, {c1}, "conv1", "", 11)->attributes["pads"] =
      ir::Attribute::of_ints({1, 1});
  g.add_node("Relu", {c1}, {r}, "relu", "", 14);
  g.add_node("Conv", {r, add_weights(g, "w2", {16, 32, 1})}, {c2}, "conv2", "", 11);
  g.add_node("Concat", {r, c2}, {joined}, "concat", "", 13)->attributes["axis"] = ir::Attribute::of_int(-2);
  ir::Node* pool = g.add_node("MaxPool", {joined}, {pooled}, "pool", "", 12);
  pool->attributes["kernel_shape"] = ir::Attribute::of_ints({2});
  pool->attributes["strides"] = ir::Attribute::of_ints({2});
  g.outputs = {pooled};
  ASSERT_TRUE(changed_ok(choose_activation_layouts(g, layout_context())));
  EXPECT_EQ(conv_layouts(g), (std::vector<std::string>{"NHWC<-same", "NHWC<-same"}));
  std::map<std::string, int> counts = op_counts(g);
  EXPECT_EQ(counts["Transpose"], 2);  // x in, the Concat's output out
  EXPECT_EQ(counts["Relayout"], 0);
  EXPECT_EQ(counts["MaxPool"], 1);
  for (const auto& n : g.nodes()) {
    if (n->op_type == "Transpose") {
      const std::vector<int64_t> perm = n->attr_ints("perm");
      EXPECT_EQ(perm, (std::vector<int64_t>{0, 2, 1})) << n->name;
    }
    if (n->op_type == "Concat") {
      EXPECT_EQ(n->attr_int("axis", -1), 2);
      EXPECT_EQ(n->outputs[0]->type.shape->to_string(), "[1,12,48]");
    }
  }
}

// 3-D convolutions (5-d tensors, R3D's video convolutions): channels-last only, as the 1-D ones
// (oneDNN's plain ncdhw convolution is an im2col gemm, 4x slower); the reorders are Transposes
// [0,2,3,4,1] in and [0,4,1,2,3] out.
TEST(ActivationLayout, ThreeDimensionalConvolutionsRunChannelsLastOnly) {
  ir::Graph g;
  ir::Value* x = testing::add_input(g, "x", ir::make_type(DType::kFloat, {1, 16, 4, 6, 6}));
  ir::Value* c1 = g.add_value("c1", ir::make_type(DType::kFloat, {1, 32, 4, 6, 6}));
  ir::Value* r = g.add_value("r", ir::make_type(DType::kFloat, {1, 32, 4, 6, 6}));
  ir::Value* c2 = g.add_value("c2", ir::make_type(DType::kFloat, {1, 16, 4, 6, 6}));
  ir::Node* conv1 = g.add_node("Conv", {x, add_weights(g, "w1", {32, 16, 3, 3, 3})}, {c1}, "conv1", "", 11);
  conv1->attributes["pads"] = ir::Attribute::of_ints({1, 1, 1, 1, 1, 1});
  g.add_node("Relu", {c1}, {r}, "relu", "", 14);
  g.add_node("Conv", {r, add_weights(g, "w2", {16, 32, 1, 1, 1})}, {c2}, "conv2", "", 11);
  g.outputs = {c2};
  ASSERT_TRUE(changed_ok(choose_activation_layouts(g, layout_context())));
  EXPECT_EQ(conv_layouts(g), (std::vector<std::string>{"NHWC<-same", "NHWC<-same"}));
  std::map<std::string, int> counts = op_counts(g);
  EXPECT_EQ(counts["Transpose"], 2);
  EXPECT_EQ(counts["Relayout"], 0);
  std::vector<std::vector<int64_t>> perms;
  for (const auto& n : g.nodes())
    if (n->op_type == "Transpose") perms.push_back(n->attr_ints("perm"));
  EXPECT_EQ(perms, (std::vector<std::vector<int64_t>>{{0, 2, 3, 4, 1}, {0, 4, 1, 2, 3}}));
}

// DenseNet's pattern: Concat -> BatchNormalization -> Relu -> Conv stays in the region, the
// BatchNormalization wrapped in kiln.InLayout, with no reorder between them.
TEST(ActivationLayout, BatchNormalizationBetweenConvolutionsJoinsTheRegion) {
  ir::Graph g;
  ir::Value* a = testing::add_input(g, "a", ir::make_type(DType::kFloat, {1, 16, 4, 4}));
  ir::Value* c = g.add_value("c", ir::make_type(DType::kFloat, {1, 16, 4, 4}));
  ir::Value* joined = g.add_value("joined", ir::make_type(DType::kFloat, {1, 32, 4, 4}));
  ir::Value* normed = g.add_value("normed", ir::make_type(DType::kFloat, {1, 32, 4, 4}));
  ir::Value* r = g.add_value("r", ir::make_type(DType::kFloat, {1, 32, 4, 4}));
  ir::Value* y = g.add_value("y", ir::make_type(DType::kFloat, {1, 16, 4, 4}));
  g.add_node("Conv", {a, add_weights(g, "w1", {16, 16, 1, 1})}, {c}, "conv1", "", 11);
  g.add_node("Concat", {a, c}, {joined}, "concat", "", 13)->attributes["axis"] = ir::Attribute::of_int(1);
  std::vector<ir::Value*> bn_inputs{joined};
  for (const char* p : {"scale", "bias", "mean", "var"}) bn_inputs.push_back(add_weights(g, p, {32}));
  g.add_node("BatchNormalization", bn_inputs, {normed}, "bn", "", 15);
  g.add_node("Relu", {normed}, {r}, "relu", "", 14);
  g.add_node("Conv", {r, add_weights(g, "w2", {16, 32, 1, 1})}, {y}, "conv2", "", 11);
  g.outputs = {y};
  ASSERT_TRUE(changed_ok(choose_activation_layouts(g, layout_context())));
  bool wrapped = false;
  for (const auto& n : g.nodes())
    if (n->op_type == "InLayout") {
      EXPECT_EQ(n->attr_string("op"), "BatchNormalization");
      EXPECT_EQ(n->attr_string("layout"), "NCHW16c");
      wrapped = true;
    }
  EXPECT_TRUE(wrapped);
  EXPECT_EQ(op_counts(g)["Relayout"], 2);  // only `a` into the region and `y` out of it
}

// x -> Conv -> PRelu(slope [C, 1, 1]) -> Conv -> y: the PRelu joins the region with its slope
// re-laid for the stored layout.
std::string prelu_between_convs(ir::Graph& g, int64_t channels) {
  ir::Value* x = testing::add_input(g, "x", ir::make_type(DType::kFloat, {1, channels, 5, 5}));
  ir::Value* c = g.add_value("c", ir::make_type(DType::kFloat, {1, channels, 5, 5}));
  ir::Value* p = g.add_value("p", ir::make_type(DType::kFloat, {1, channels, 5, 5}));
  ir::Value* y = g.add_value("y", ir::make_type(DType::kFloat, {1, channels, 5, 5}));
  g.add_node("Conv", {x, add_weights(g, "w1", {channels, channels, 1, 1})}, {c}, "conv1", "", 11);
  g.add_node("PRelu", {c, add_weights(g, "slope", {channels, 1, 1})}, {p}, "prelu", "", 16);
  g.add_node("Conv", {p, add_weights(g, "w2", {channels, channels, 1, 1})}, {y}, "conv2", "", 11);
  g.outputs = {y};
  EXPECT_TRUE(changed_ok(choose_activation_layouts(g, layout_context())));
  for (const auto& n : g.nodes())
    if (n->op_type == "PRelu") return n->inputs[0]->type.shape->to_string() + " " + n->inputs[1]->type.shape->to_string();
  return "";
}

TEST(ActivationLayout, APerChannelPReluJoinsTheRegion) {
  ir::Graph blocked;
  EXPECT_EQ(prelu_between_convs(blocked, 32), "[1,2,5,5,16] [2,1,1,16]");
  EXPECT_EQ(op_counts(blocked)["Relayout"], 2);  // into the region and out of it only
  ir::Graph last;
  EXPECT_EQ(prelu_between_convs(last, 20), "[1,5,5,20] [20]");
  EXPECT_EQ(op_counts(last)["Transpose"], 2);
}

// x[1,16,6,6] -> Conv(32) -> Split [16, 16] (sizes as an input) -> Conv(16) each -> y1, y2.
std::string split_between_convs(const kiln::testing::ScratchDir& dir) {
  using kiln::testing::ModelBuilder;
  constexpr int kFloat = onnx::TensorProto::FLOAT;
  std::vector<float> w(32 * 16);
  for (size_t i = 0; i < w.size(); ++i) w[i] = 0.02f * static_cast<float>(static_cast<int>(i % 9) - 4);
  ModelBuilder b(13);
  b.input("x", kFloat, {int64_t{1}, int64_t{16}, int64_t{6}, int64_t{6}});
  for (const char* y : {"y1", "y2"}) b.output(y, kFloat, {int64_t{1}, int64_t{16}, int64_t{6}, int64_t{6}});
  b.float_initializer("w", {32, 16, 1, 1}, w);
  b.float_initializer("w1", {16, 16, 1, 1}, std::vector<float>(w.begin(), w.begin() + 256));
  b.float_initializer("w2", {16, 16, 1, 1}, std::vector<float>(w.begin() + 256, w.end()));
  b.int64_initializer("sizes", {2}, {16, 16});
  b.node("Conv", {"x", "w"}, {"c"}, "conv");
  ModelBuilder::int_attribute(b.node("Split", {"c", "sizes"}, {"h1", "h2"}, "split"), "axis", 1);
  b.node("Conv", {"h1", "w1"}, {"y1"}, "conv1");
  b.node("Conv", {"h2", "w2"}, {"y2"}, "conv2");
  return b.save(dir.file("split.onnx"));
}

TEST(ActivationLayout, ASplitOfChannelBlocksJoinsTheRegion) {
  ir::Graph g;
  ir::Value* x = testing::add_input(g, "x", ir::make_type(DType::kFloat, {1, 16, 4, 4}));
  ir::Value* c = g.add_value("c", ir::make_type(DType::kFloat, {1, 32, 4, 4}));
  ir::Value* h1 = g.add_value("h1", ir::make_type(DType::kFloat, {1, 16, 4, 4}));
  ir::Value* h2 = g.add_value("h2", ir::make_type(DType::kFloat, {1, 16, 4, 4}));
  ir::Value* y1 = g.add_value("y1", ir::make_type(DType::kFloat, {1, 16, 4, 4}));
  ir::Value* y2 = g.add_value("y2", ir::make_type(DType::kFloat, {1, 16, 4, 4}));
  g.add_node("Conv", {x, add_weights(g, "w", {32, 16, 1, 1})}, {c}, "conv", "", 11);
  g.add_node("Split", {c, testing::add_int64s(g, "sizes", {16, 16})}, {h1, h2}, "split", "", 13)->attributes["axis"] =
      ir::Attribute::of_int(1);
  g.add_node("Conv", {h1, add_weights(g, "w1", {16, 16, 1, 1})}, {y1}, "conv1", "", 11);
  g.add_node("Conv", {h2, add_weights(g, "w2", {16, 16, 1, 1})}, {y2}, "conv2", "", 11);
  g.outputs = {y1, y2};
  ASSERT_TRUE(changed_ok(choose_activation_layouts(g, layout_context())));
  for (const auto& n : g.nodes())
    if (n->op_type == "Split") {
      EXPECT_EQ(testing::int64s_of(n->inputs[1]), (std::vector<int64_t>{1, 1}));  // in blocks of 16
      EXPECT_EQ(n->outputs[0]->type.shape->to_string(), "[1,1,4,4,16]");
    }
  EXPECT_EQ(op_counts(g)["Relayout"], 3);  // x in, y1 and y2 out

  kiln::testing::ScratchDir dir("activation_layout_split");
  const std::string model = split_between_convs(dir);
  std::vector<float> xs(16 * 36);
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = 0.05f * static_cast<float>(static_cast<int>(i % 13) - 6);
  std::map<std::string, std::map<std::string, Tensor>> outputs;
  for (const std::string provider : {"cpu_ref", "cpu"}) {
    SessionOptions options;
    options.providers = {provider};
    options.optimize = provider == "cpu";
    auto session = Session::load(model, options);
    ASSERT_TRUE(session.is_ok()) << session.status().to_string();
    auto out = session.value()->run({{"x", Tensor::from_vector<float>(DType::kFloat, {1, 16, 6, 6}, xs)}});
    ASSERT_TRUE(out.is_ok()) << out.status().to_string();
    outputs[provider] = out.value();
  }
  for (const char* y : {"y1", "y2"})
    for (int64_t i = 0; i < outputs["cpu"].at(y).element_count(); ++i)
      EXPECT_NEAR(outputs["cpu"].at(y).data<float>()[i], outputs["cpu_ref"].at(y).data<float>()[i], 1e-5) << y << " " << i;
}

TEST(ActivationLayout, AnAvx2ProviderNeverGetsSixteenChannelBlocks) {
  ir::Graph g;
  two_convs(g, 16, 32, 48);
  PassContext ctx = testing::fake_context();
  ctx.activation_layouts = {ops::ActivationLayout::blocked(8), ops::ActivationLayout::channels_last()};
  ASSERT_TRUE(changed_ok(choose_activation_layouts(g, ctx)));
  EXPECT_EQ(conv_layouts(g), (std::vector<std::string>{"NCHW8c<-same", "NCHW8c<-same"}));
}

TEST(ActivationLayout, ARegionNoPreferredLayoutFitsStaysChannelsFirst) {
  ir::Graph g;
  two_convs(g, 16, 20, 16);
  PassContext ctx = testing::fake_context();
  ctx.activation_layouts = {ops::ActivationLayout::blocked(16)};
  EXPECT_FALSE(changed_ok(choose_activation_layouts(g, ctx)));
  EXPECT_EQ(op_counts(g)["Conv"], 2);
}

TEST(ActivationLayout, OffUnlessTheTargetPrefersIt) {
  ir::Graph g;
  two_convs(g, 16, 32, 48);
  EXPECT_FALSE(changed_ok(choose_activation_layouts(g, testing::fake_context())));
}

// x[2,3,10,10] -> Conv(32, 3x3 s2) -> Clip -> depthwise Conv -> Conv(32, 1x1) + x' (residual Add)
// -> MaxPool -> GlobalAveragePool -> y: a MobileNet-like block in a blocked layout (the target's
// widest block: NCHW16c on AVX-512, NCHW8c on AVX2), end to end.
std::string mobile_block(const kiln::testing::ScratchDir& dir) {
  using kiln::testing::ModelBuilder;
  constexpr int kFloat = onnx::TensorProto::FLOAT;
  auto wave = [](size_t n, float scale) {
    std::vector<float> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = scale * static_cast<float>(static_cast<int>((i * 7) % 13) - 6);
    return v;
  };
  const auto ints = ModelBuilder::ints_attribute;
  ModelBuilder b(13);
  b.input("x", kFloat, {int64_t{2}, int64_t{3}, int64_t{10}, int64_t{10}});
  b.output("y", kFloat, {int64_t{2}, int64_t{32}, int64_t{1}, int64_t{1}});
  b.float_initializer("w1", {32, 3, 3, 3}, wave(32 * 27, 0.05f));
  b.float_initializer("b1", {32}, wave(32, 0.1f));
  b.float_initializer("wd", {32, 1, 3, 3}, wave(32 * 9, 0.07f));
  b.float_initializer("wp", {32, 32, 1, 1}, wave(32 * 32, 0.03f));
  b.float_initializer("lo", {}, {0.0f});
  b.float_initializer("hi", {}, {6.0f});
  onnx::NodeProto& c1 = b.node("Conv", {"x", "w1", "b1"}, {"c1"}, "stem");
  ints(c1, "strides", {2, 2});
  ints(c1, "pads", {1, 1, 1, 1});
  b.node("Clip", {"c1", "lo", "hi"}, {"r1"}, "clip");
  onnx::NodeProto& dw = b.node("Conv", {"r1", "wd"}, {"d"}, "depthwise");
  ints(dw, "pads", {1, 1, 1, 1});
  ModelBuilder::int_attribute(dw, "group", 32);
  b.float_initializer("slope", {32, 1, 1}, wave(32, 0.1f));
  b.node("PRelu", {"d", "slope"}, {"dp"}, "prelu");
  b.node("Conv", {"dp", "wp"}, {"p"}, "project");
  b.node("Add", {"p", "r1"}, {"s"}, "residual");
  onnx::NodeProto& pool = b.node("MaxPool", {"s"}, {"m"}, "pool");
  ints(pool, "kernel_shape", {2, 2});
  ints(pool, "strides", {2, 2});
  b.node("GlobalAveragePool", {"m"}, {"y"}, "gap");
  return b.save(dir.file("model.onnx"));
}

TEST(ActivationLayout, ABlockedRegionComputesWhatTheOriginalComputes) {
  kiln::testing::ScratchDir dir("activation_layout");
  const std::string model = mobile_block(dir);
  std::vector<float> x(2 * 3 * 10 * 10);
  for (size_t i = 0; i < x.size(); ++i) x[i] = 0.01f * static_cast<float>(static_cast<int>(i % 37) - 18);
  std::map<std::string, Tensor> outputs;
  for (const std::string provider : {"cpu_ref", "cpu"}) {
    SessionOptions options;
    options.providers = {provider};
    options.optimize = provider == "cpu";
    auto session = Session::load(model, options);
    ASSERT_TRUE(session.is_ok()) << session.status().to_string();
    auto out = session.value()->run({{"x", Tensor::from_vector<float>(DType::kFloat, {2, 3, 10, 10}, x)}});
    ASSERT_TRUE(out.is_ok()) << out.status().to_string();
    outputs[provider] = out.value().at("y");
    if (provider == "cpu") {
      const std::string report = session.value()->report_json();
      EXPECT_NE(report.find("\"Relayout\""), std::string::npos);
    }
  }
  ASSERT_EQ(outputs["cpu"].shape(), outputs["cpu_ref"].shape());
  for (int64_t i = 0; i < outputs["cpu"].element_count(); ++i)
    EXPECT_NEAR(outputs["cpu"].data<float>()[i], outputs["cpu_ref"].data<float>()[i], 1e-5) << i;
}

}  // namespace
}  // namespace kiln::passes
