// Tests of activation_layout, on IR text: each convolution region gets the first of the
// provider's preferred layouts it fits (here NCHW16c, NCHW8c, NHWC: the widest channel block that
// divides all its channel counts, else NHWC; an AVX2 provider's list has no NCHW16c; none: the
// region stays) and becomes kiln.FusedConv nodes with that layout; a narrow image input is read
// channels-first; reorders (kiln.Relayout, Transposes for NHWC) appear only at region edges;
// Concat and Split keep the channel axis (a blocked Split's sizes in blocks); BatchNormalization,
// a per-channel PRelu (its slope re-laid) and a channel shuffle join a region; 1-D and 3-D
// convolutions run channels-last only; only nodes the provider owns join. End to end, converted
// models compute what the originals compute, on cpu and cpu_ref.
#include "kiln/passes/activation_layout.h"

#include <gtest/gtest.h>

#include <map>

#include "kiln/session.h"
#include "passes/pass_test_util.h"
#include "support/model_builder.h"

namespace kiln::passes {
namespace {

PassContext layout_context() {
  PassContext ctx = testing::fake_context();
  ctx.preferences = {{ops::GraphForm::kActivationLayouts},
                     {ops::ActivationLayout::blocked(16), ops::ActivationLayout::blocked(8), ops::ActivationLayout::channels_last()}};
  return ctx;
}

// `text` after activation_layout (with `ctx`'s preferred layouts) and dead-code elimination, which
// removes the channels-first originals and the reorders back that nothing reads.
testing::Rewritten laid_out(std::string_view text, const PassContext& ctx = layout_context()) {
  return testing::rewrite_ir(text, choose_activation_layouts, ctx);
}

std::string dims(std::initializer_list<int64_t> values) {
  std::string s;
  for (int64_t v : values) s += (s.empty() ? "" : ",") + std::to_string(v);
  return s;
}

// x[1,in,8,8] -> Conv(mid, 3x3, pad 1) -> Relu -> Conv(out, 1x1) -> y[1,out,8,8], as IR text.
std::string two_convs(int64_t in, int64_t mid, int64_t out) {
  return "graph main (%x: float[" + dims({1, in, 8, 8}) + "]) -> (%y) {\n" +
         "  %w1 = constant float[" + dims({mid, in, 3, 3}) + "]\n" +
         "  %w2 = constant float[" + dims({out, mid, 1, 1}) + "]\n" +
         "  %c: float[" + dims({1, mid, 8, 8}) + "] = Conv 'conv1'(%x, %w1) {pads=[1,1,1,1]}\n" +
         "  %r: float[" + dims({1, mid, 8, 8}) + "] = Relu 'relu'(%c)\n" +
         "  %y: float[" + dims({1, out, 8, 8}) + "] = Conv 'conv2'(%r, %w2)\n}";
}

// Node counts by op (with its domain).
std::map<std::string, int> op_counts(const testing::Rewritten& r) {
  std::map<std::string, int> counts;
  if (r.graph)
    for (const auto& n : r.graph->nodes()) ++counts[(n->domain.empty() ? "" : n->domain + ".") + n->op_type];
  return counts;
}

// Each FusedConv's layout and input layout, in graph order.
std::vector<std::string> conv_layouts(const testing::Rewritten& r) {
  std::vector<std::string> layouts;
  if (r.graph)
    for (const auto& n : r.graph->nodes())
      if (n->op_type == "FusedConv") layouts.push_back(n->attr_string("layout") + "<-" + n->attr_string("input_layout", "same"));
  return layouts;
}

// Whether the printed graph has `line` (one node or constant, without its indent) as a whole line.
bool has_line(const testing::Rewritten& r, const std::string& line) {
  return r.printed.find("\n  " + line + "\n") != std::string::npos;
}

TEST(ActivationLayout, ChannelsDivisibleBySixteenRunInNCHW16c) {
  const testing::Rewritten r = laid_out(two_convs(16, 32, 48));
  EXPECT_TRUE(r.changed);
  EXPECT_EQ(r.printed,
            "graph main (%x: float[1,16,8,8]) -> (%y: float[1,48,8,8]) {\n"
            "  %w1 = constant float[32,16,3,3]\n"
            "  %w2 = constant float[48,32,1,1]\n"
            "  %x_NCHW16c: float[1,1,8,8,16] = kiln.Relayout 'x_to_NCHW16c'(%x) {from=\"NCHW\", to=\"NCHW16c\"}\n"
            "  %c_NCHW16c: float[1,2,8,8,16] = kiln.FusedConv 'conv1'(%x_NCHW16c, %w1) {layout=\"NCHW16c\", pads=[1,1,1,1]}\n"
            "  %r_NCHW16c: float[1,2,8,8,16] = Relu 'relu'(%c_NCHW16c)\n"
            "  %y_NCHW16c: float[1,3,8,8,16] = kiln.FusedConv 'conv2'(%r_NCHW16c, %w2) {layout=\"NCHW16c\"}\n"
            "  %y: float[1,48,8,8] = kiln.Relayout 'y_to_nchw'(%y_NCHW16c) {from=\"NCHW16c\", to=\"NCHW\"}\n"
            "}");
}

TEST(ActivationLayout, ChannelsDivisibleOnlyByEightRunInNCHW8c) {
  const testing::Rewritten r = laid_out(two_convs(16, 24, 144));
  EXPECT_TRUE(r.changed);
  EXPECT_EQ(conv_layouts(r), (std::vector<std::string>{"NCHW8c<-same", "NCHW8c<-same"}));
  EXPECT_TRUE(has_line(r, "%y_NCHW8c: float[1,18,8,8,8] = kiln.FusedConv 'conv2'(%r_NCHW8c, %w2)"
                          " {layout=\"NCHW8c\"}"))
      << r.printed;
}

TEST(ActivationLayout, OtherChannelCountsRunChannelsLast) {
  const testing::Rewritten r = laid_out(two_convs(16, 20, 16));
  EXPECT_TRUE(r.changed);
  EXPECT_EQ(r.printed,
            "graph main (%x: float[1,16,8,8]) -> (%y: float[1,16,8,8]) {\n"
            "  %w1 = constant float[20,16,3,3]\n"
            "  %w2 = constant float[16,20,1,1]\n"
            "  %x_NHWC: float[1,8,8,16] = Transpose 'x_to_NHWC'(%x) {perm=[0,2,3,1]}\n"
            "  %c_NHWC: float[1,8,8,20] = kiln.FusedConv 'conv1'(%x_NHWC, %w1) {layout=\"NHWC\", pads=[1,1,1,1]}\n"
            "  %r_NHWC: float[1,8,8,20] = Relu 'relu'(%c_NHWC)\n"
            "  %y_NHWC: float[1,8,8,16] = kiln.FusedConv 'conv2'(%r_NHWC, %w2) {layout=\"NHWC\"}\n"
            "  %y: float[1,16,8,8] = Transpose 'y_to_nchw'(%y_NHWC) {perm=[0,3,1,2]}\n"
            "}");
}

TEST(ActivationLayout, AnImageInputIsReadChannelsFirstWithoutAReorder) {
  const testing::Rewritten r = laid_out(two_convs(3, 32, 16));
  EXPECT_TRUE(r.changed);
  EXPECT_EQ(conv_layouts(r), (std::vector<std::string>{"NCHW16c<-NCHW", "NCHW16c<-same"}));
  EXPECT_TRUE(has_line(r, "%c_NCHW16c: float[1,2,8,8,16] = kiln.FusedConv 'conv1'(%x, %w1)"
                          " {input_layout=\"NCHW\", layout=\"NCHW16c\", pads=[1,1,1,1]}"))
      << r.printed;
  EXPECT_EQ(op_counts(r)["kiln.Relayout"], 1);  // out of the region only
}

// A second region after a Softmax (not layout-agnostic): 20 channels, so NHWC.
TEST(ActivationLayout, EachRegionChoosesItsOwnLayout) {
  const testing::Rewritten r = laid_out(R"(graph main (%x: float[1,16,8,8]) -> (%z) {
    %w1 = constant float[32,16,3,3]
    %w2 = constant float[32,32,1,1]
    %w3 = constant float[20,32,1,1]
    %c: float[1,32,8,8] = Conv 'conv1'(%x, %w1) {pads=[1,1,1,1]}
    %r: float[1,32,8,8] = Relu 'relu'(%c)
    %y: float[1,32,8,8] = Conv 'conv2'(%r, %w2)
    %s: float[1,32,8,8] = Softmax 'softmax'(%y)
    %z: float[1,20,8,8] = Conv 'conv3'(%s, %w3)
  })");
  EXPECT_TRUE(r.changed);
  EXPECT_EQ(conv_layouts(r), (std::vector<std::string>{"NCHW16c<-same", "NCHW16c<-same", "NHWC<-same"}));
  EXPECT_TRUE(has_line(r, "%s_NHWC: float[1,8,8,32] = Transpose 's_to_NHWC'(%s) {perm=[0,2,3,1]}")) << r.printed;
}

TEST(ActivationLayout, ConcatKeepsTheChannelAxisInBlockedLayouts) {
  const testing::Rewritten r = laid_out(R"(graph main (%a: float[1,16,4,4]) -> (%joined) {
    %wa = constant float[8,16,1,1]
    %wb = constant float[16,16,1,1]
    %ca: float[1,8,4,4] = Conv 'conv_a'(%a, %wa)
    %cb: float[1,16,4,4] = Conv 'conv_b'(%a, %wb)
    %joined: float[1,24,4,4] = Concat 'concat'(%ca, %cb) {axis=-3}
  })");
  EXPECT_TRUE(r.changed);
  EXPECT_EQ(r.printed,
            "graph main (%a: float[1,16,4,4]) -> (%joined: float[1,24,4,4]) {\n"
            "  %wa = constant float[8,16,1,1]\n"
            "  %wb = constant float[16,16,1,1]\n"
            "  %a_NCHW8c: float[1,2,4,4,8] = kiln.Relayout 'a_to_NCHW8c'(%a) {from=\"NCHW\", to=\"NCHW8c\"}\n"
            "  %ca_NCHW8c: float[1,1,4,4,8] = kiln.FusedConv 'conv_a'(%a_NCHW8c, %wa) {layout=\"NCHW8c\"}\n"
            "  %cb_NCHW8c: float[1,2,4,4,8] = kiln.FusedConv 'conv_b'(%a_NCHW8c, %wb) {layout=\"NCHW8c\"}\n"
            "  %joined_NCHW8c: float[1,3,4,4,8] = Concat 'concat'(%ca_NCHW8c, %cb_NCHW8c) {axis=1}\n"
            "  %joined: float[1,24,4,4] = kiln.Relayout 'joined_to_nchw'(%joined_NCHW8c) {from=\"NCHW8c\", to=\"NCHW\"}\n"
            "}");  // `a` reordered once for both convolutions
}

// A region a block does not fit as a whole: its connected part of at least two convolutions the
// block fits runs blocked, the rest channels-last, a lone fitting convolution with the rest.
// x[16] -> conv1 -> [20] -> conv2 -> [32] -> conv3 -> [32] -> conv4 -> [48] -> Relu -> conv5 -> [20]
TEST(ActivationLayout, TheBlockedPartsOfARegionRunBlocked) {
  const testing::Rewritten r = laid_out(R"(graph main (%x: float[1,16,6,6]) -> (%c5) {
    %w1 = constant float[20,16,1,1]
    %w2 = constant float[32,20,1,1]
    %w3 = constant float[32,32,1,1]
    %w4 = constant float[48,32,1,1]
    %w5 = constant float[20,48,1,1]
    %c1: float[1,20,6,6] = Conv 'conv1'(%x, %w1)
    %c2: float[1,32,6,6] = Conv 'conv2'(%c1, %w2)
    %c3: float[1,32,6,6] = Conv 'conv3'(%c2, %w3)
    %c4: float[1,48,6,6] = Conv 'conv4'(%c3, %w4)
    %r: float[1,48,6,6] = Relu 'relu'(%c4)
    %c5: float[1,20,6,6] = Conv 'conv5'(%r, %w5)
  })");
  EXPECT_TRUE(r.changed);
  // conv1 (16 -> 20) and conv5 (48 -> 20) fit no block; conv2 (20 -> 32) reads 20 channels.
  EXPECT_EQ(conv_layouts(r),
            (std::vector<std::string>{"NHWC<-same", "NHWC<-same", "NCHW16c<-same", "NCHW16c<-same", "NHWC<-same"}));
  // One reorder between the parts each way, not two through channels-first.
  EXPECT_TRUE(has_line(r, "%c2_NCHW16c: float[1,2,6,6,16] = kiln.Relayout 'c2_to_NCHW16c'(%c2_NHWC)"
                          " {from=\"NHWC\", to=\"NCHW16c\"}"))
      << r.printed;
  EXPECT_TRUE(has_line(r, "%r_NHWC: float[1,6,6,48] = kiln.Relayout 'r_to_NHWC'(%r_NCHW16c)"
                          " {from=\"NCHW16c\", to=\"NHWC\"}"))
      << r.printed;
}

// 1-D convolutions (3-d tensors, silero's): channels-last only, even where a block divides every
// channel count; the reorders are Transposes [0,2,1]; a Concat of channels takes the last axis. A
// 1-D pool does not start a region.
TEST(ActivationLayout, OneDimensionalConvolutionsRunChannelsLastOnly) {
  const testing::Rewritten r = laid_out(R"(graph main (%x: float[1,16,12]) -> (%pooled) {
    %w1 = constant float[32,16,3]
    %w2 = constant float[16,32,1]
    %c1: float[1,32,12] = Conv 'conv1'(%x, %w1) {pads=[1,1]}
    %r: float[1,32,12] = Relu 'relu'(%c1)
    %c2: float[1,16,12] = Conv 'conv2'(%r, %w2)
    %joined: float[1,48,12] = Concat 'concat'(%r, %c2) {axis=-2}
    %pooled: float[1,48,6] = MaxPool 'pool'(%joined) {kernel_shape=[2], strides=[2]}
  })");
  EXPECT_TRUE(r.changed);
  EXPECT_EQ(r.printed,
            "graph main (%x: float[1,16,12]) -> (%pooled: float[1,48,6]) {\n"
            "  %w1 = constant float[32,16,3]\n"
            "  %w2 = constant float[16,32,1]\n"
            "  %x_NHWC: float[1,12,16] = Transpose 'x_to_NHWC'(%x) {perm=[0,2,1]}\n"
            "  %c1_NHWC: float[1,12,32] = kiln.FusedConv 'conv1'(%x_NHWC, %w1) {layout=\"NHWC\", pads=[1,1]}\n"
            "  %r_NHWC: float[1,12,32] = Relu 'relu'(%c1_NHWC)\n"
            "  %c2_NHWC: float[1,12,16] = kiln.FusedConv 'conv2'(%r_NHWC, %w2) {layout=\"NHWC\"}\n"
            "  %joined_NHWC: float[1,12,48] = Concat 'concat'(%r_NHWC, %c2_NHWC) {axis=2}\n"
            "  %joined: float[1,48,12] = Transpose 'joined_to_nchw'(%joined_NHWC) {perm=[0,2,1]}\n"
            "  %pooled: float[1,48,6] = MaxPool 'pool'(%joined) {kernel_shape=[2], strides=[2]}\n"
            "}");
}

// 3-D convolutions (5-d tensors, R3D's video convolutions): channels-last only, as the 1-D ones
// (oneDNN's plain ncdhw convolution is an im2col gemm, 4x slower); the reorders are Transposes
// [0,2,3,4,1] in and [0,4,1,2,3] out.
TEST(ActivationLayout, ThreeDimensionalConvolutionsRunChannelsLastOnly) {
  const testing::Rewritten r = laid_out(R"(graph main (%x: float[1,16,4,6,6]) -> (%c2) {
    %w1 = constant float[32,16,3,3,3]
    %w2 = constant float[16,32,1,1,1]
    %c1: float[1,32,4,6,6] = Conv 'conv1'(%x, %w1) {pads=[1,1,1,1,1,1]}
    %r: float[1,32,4,6,6] = Relu 'relu'(%c1)
    %c2: float[1,16,4,6,6] = Conv 'conv2'(%r, %w2)
  })");
  EXPECT_TRUE(r.changed);
  EXPECT_EQ(conv_layouts(r), (std::vector<std::string>{"NHWC<-same", "NHWC<-same"}));
  EXPECT_TRUE(has_line(r, "%x_NHWC: float[1,4,6,6,16] = Transpose 'x_to_NHWC'(%x) {perm=[0,2,3,4,1]}")) << r.printed;
  EXPECT_TRUE(has_line(r, "%c2: float[1,16,4,6,6] = Transpose 'c2_to_nchw'(%c2_NHWC) {perm=[0,4,1,2,3]}")) << r.printed;
  EXPECT_EQ(op_counts(r)["Transpose"], 2);
}

// DenseNet's pattern: Concat -> BatchNormalization -> Relu -> Conv stays in the region, the
// BatchNormalization wrapped in kiln.InLayout, with no reorder between them.
TEST(ActivationLayout, BatchNormalizationBetweenConvolutionsJoinsTheRegion) {
  const testing::Rewritten r = laid_out(R"(graph main (%a: float[1,16,4,4]) -> (%y) {
    %w1 = constant float[16,16,1,1]
    %w2 = constant float[16,32,1,1]
    %p = constant float[32]
    %c: float[1,16,4,4] = Conv 'conv1'(%a, %w1)
    %joined: float[1,32,4,4] = Concat 'concat'(%a, %c) {axis=1}
    %normed: float[1,32,4,4] = BatchNormalization 'bn'(%joined, %p, %p, %p, %p)
    %r: float[1,32,4,4] = Relu 'relu'(%normed)
    %y: float[1,16,4,4] = Conv 'conv2'(%r, %w2)
  })");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(has_line(r, "%normed_NCHW16c: float[1,2,4,4,16] = kiln.InLayout 'bn'(%joined_NCHW16c, %p, %p, %p, %p)"
                          " {layout=\"NCHW16c\", op=\"BatchNormalization\", op_version=17}"))
      << r.printed;
  EXPECT_EQ(op_counts(r)["kiln.Relayout"], 2);  // only `a` into the region and `y` out of it
}

// x -> Conv -> PRelu(slope [C, 1, 1] = 0, 1, ..., C-1) -> Conv -> y, as IR text.
std::string prelu_between_convs(int64_t channels) {
  const std::string c = std::to_string(channels), type = "float[1," + c + ",5,5]";
  std::string slope;
  for (int64_t i = 0; i < channels; ++i) slope += (i ? "," : "") + std::to_string(i) + ".0";
  return "graph main (%x: " + type + ") -> (%y) {\n" +
         "  %w1 = constant float[" + c + "," + c + ",1,1]\n" +
         "  %w2 = constant float[" + c + "," + c + ",1,1]\n" +
         "  %slope = constant float[" + c + ",1,1] [" + slope + "]\n" +
         "  %c: " + type + " = Conv 'conv1'(%x, %w1)\n" +
         "  %p: " + type + " = PRelu 'prelu'(%c, %slope)\n" +
         "  %y: " + type + " = Conv 'conv2'(%p, %w2)\n}";
}

// The PRelu joins the region with its slope re-laid for the stored layout, the values in order
// (channel c is block c / 16, lane c % 16; or the last axis).
TEST(ActivationLayout, APerChannelPReluJoinsTheRegion) {
  const testing::Rewritten blocked = laid_out(prelu_between_convs(32));
  EXPECT_TRUE(has_line(blocked, "%p_NCHW16c: float[1,2,5,5,16] = PRelu 'prelu'(%c_NCHW16c, %slope_NCHW16c)")) << blocked.printed;
  EXPECT_EQ(op_counts(blocked)["kiln.Relayout"], 2);  // into the region and out of it only
  const testing::Rewritten last = laid_out(prelu_between_convs(20));
  EXPECT_TRUE(has_line(last, "%p_NHWC: float[1,5,5,20] = PRelu 'prelu'(%c_NHWC, %slope_NHWC)")) << last.printed;
  EXPECT_EQ(op_counts(last)["Transpose"], 2);
  for (const testing::Rewritten* r : {&blocked, &last}) {
    ASSERT_TRUE(r->graph);
    const ir::Node* prelu = testing::node_named(*r->graph, "prelu");
    ASSERT_TRUE(prelu);
    const std::vector<float> slope = testing::floats_of(prelu->inputs[1]);
    for (size_t i = 0; i < slope.size(); ++i) EXPECT_EQ(slope[i], static_cast<float>(i));
  }
}

// x[1,16,4,4] -> Conv(32) -> Split [16, 16] (sizes as an input) -> Conv(16) each -> y1, y2: the
// Split's sizes count blocks of 16.
TEST(ActivationLayout, ASplitOfChannelBlocksJoinsTheRegion) {
  const testing::Rewritten r = laid_out(R"(graph main (%x: float[1,16,4,4]) -> (%y1, %y2) {
    %w = constant float[32,16,1,1]
    %w1 = constant float[16,16,1,1]
    %w2 = constant float[16,16,1,1]
    %sizes = constant int64[2] [16,16]
    %c: float[1,32,4,4] = Conv 'conv'(%x, %w)
    %h1: float[1,16,4,4], %h2: float[1,16,4,4] = Split 'split'(%c, %sizes) {axis=1}
    %y1: float[1,16,4,4] = Conv 'conv1'(%h1, %w1)
    %y2: float[1,16,4,4] = Conv 'conv2'(%h2, %w2)
  })");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(has_line(r, "%split_stored_split = constant int64[2] [1,1]")) << r.printed;
  EXPECT_TRUE(has_line(r, "%h1_NCHW16c: float[1,1,4,4,16], %h2_NCHW16c: float[1,1,4,4,16]"
                          " = Split 'split'(%c_NCHW16c, %split_stored_split) {axis=1}"))
      << r.printed;
  EXPECT_EQ(op_counts(r)["kiln.Relayout"], 3);  // x in, y1 and y2 out
}

// ShuffleNet's Concat -> kiln.ChannelShuffle -> Split between convolutions (6 and 12 channels:
// NHWC): the shuffle stays in the region, permuting the last axis; reorders at its edges only.
TEST(ActivationLayout, AChannelShuffleJoinsAChannelsLastRegion) {
  const testing::Rewritten r = laid_out(R"(graph main (%x: float[1,8,5,5]) -> (%y1, %y2) {
    %wa = constant float[6,8,1,1]
    %wb = constant float[6,8,1,1]
    %w1 = constant float[6,6,1,1]
    %w2 = constant float[6,6,1,1]
    %halves = constant int64[2] [6,6]
    %a: float[1,6,5,5] = Conv 'conv_a'(%x, %wa)
    %b: float[1,6,5,5] = Conv 'conv_b'(%x, %wb)
    %joined: float[1,12,5,5] = Concat 'concat'(%a, %b) {axis=1}
    %shuffled: float[1,12,5,5] = kiln.ChannelShuffle 'shuffle'(%joined) {groups=2}
    %h1: float[1,6,5,5], %h2: float[1,6,5,5] = Split 'split'(%shuffled, %halves) {axis=1}
    %y1: float[1,6,5,5] = Conv 'conv_1'(%h1, %w1)
    %y2: float[1,6,5,5] = Conv 'conv_2'(%h2, %w2)
  })");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(has_line(r, "%shuffled_NHWC: float[1,5,5,12] = kiln.ChannelShuffle 'shuffle'(%joined_NHWC)"
                          " {groups=2, layout=\"NHWC\"}"))
      << r.printed;
  EXPECT_EQ(op_counts(r)["Transpose"], 3);  // x in, y1 and y2 out
  EXPECT_EQ(op_counts(r)["kiln.Relayout"], 0);
}

TEST(ActivationLayout, AnAvx2ProviderNeverGetsSixteenChannelBlocks) {
  PassContext ctx = testing::fake_context();
  ctx.preferences = {{ops::GraphForm::kActivationLayouts}, {ops::ActivationLayout::blocked(8), ops::ActivationLayout::channels_last()}};
  const testing::Rewritten r = laid_out(two_convs(16, 32, 48), ctx);
  EXPECT_TRUE(r.changed);
  EXPECT_EQ(conv_layouts(r), (std::vector<std::string>{"NCHW8c<-same", "NCHW8c<-same"}));
}

TEST(ActivationLayout, ARegionNoPreferredLayoutFitsStaysChannelsFirst) {
  PassContext ctx = testing::fake_context();
  ctx.preferences = {{ops::GraphForm::kActivationLayouts}, {ops::ActivationLayout::blocked(16)}};
  const testing::Rewritten r = laid_out(two_convs(16, 20, 16), ctx);
  EXPECT_FALSE(r.changed);
  EXPECT_EQ(op_counts(r)["Conv"], 2);
}

TEST(ActivationLayout, OffUnlessTheTargetPrefersIt) {
  EXPECT_FALSE(laid_out(two_convs(16, 32, 48), testing::fake_context()).changed);
}

// Lowering a partitioned graph: conv2, which another provider runs, stays channels-first and reads
// the region's output reordered back.
TEST(ActivationLayout, OnlyNodesTheProviderOwnsJoinARegion) {
  PassContext ctx = layout_context();
  ctx.owned = [](const ir::Node& n) { return n.name != "conv2"; };
  const testing::Rewritten r = laid_out(two_convs(16, 32, 48), ctx);
  EXPECT_TRUE(r.changed);
  EXPECT_EQ(conv_layouts(r), (std::vector<std::string>{"NCHW16c<-same"}));
  EXPECT_TRUE(has_line(r, "%r: float[1,32,8,8] = kiln.Relayout 'r_to_nchw'(%r_NCHW16c)"
                          " {from=\"NCHW16c\", to=\"NCHW\"}"))
      << r.printed;
}

using kiln::testing::ModelBuilder;
using kiln::testing::ScratchDir;

constexpr int kFloat = onnx::TensorProto::FLOAT;

// x[1,16,6,6] -> Conv(32) -> Split [16, 16] (sizes as an input) -> Conv(16) each -> y1, y2.
std::string split_between_convs(const ScratchDir& dir) {
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

// x[2,3,10,10] -> Conv(32, 3x3 s2) -> Clip -> depthwise Conv -> PRelu -> Conv(32, 1x1) + the Clip's
// output (residual Add) -> MaxPool -> GlobalAveragePool -> y: a MobileNet-like block in a blocked
// layout (the target's widest block: NCHW16c on AVX-512, NCHW8c on AVX2), end to end.
std::string mobile_block(const ScratchDir& dir) {
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

// A wave of `n` values for the model's input.
std::vector<float> input_values(size_t n) {
  std::vector<float> x(n);
  for (size_t i = 0; i < x.size(); ++i) x[i] = 0.01f * static_cast<float>(static_cast<int>(i % 37) - 18);
  return x;
}

struct Ran {
  std::map<std::string, Tensor> outputs;
  std::string report;
};

// The model run on `provider`, optimized on cpu only (cpu_ref runs the graph as it is).
Ran run(const std::string& model, const std::string& provider, const Tensor& x) {
  SessionOptions options;
  options.providers = {provider};
  options.optimize = provider == "cpu";
  auto session = Session::load(model, options);
  EXPECT_TRUE(session.is_ok()) << session.status().to_string();
  if (!session.is_ok()) return {};
  auto out = session.value()->run({{"x", x}});
  EXPECT_TRUE(out.is_ok()) << out.status().to_string();
  return {out.is_ok() ? out.value() : std::map<std::string, Tensor>{}, session.value()->report_json()};
}

void expect_close(const Tensor& got, const Tensor& want, const std::string& label) {
  ASSERT_EQ(got.shape(), want.shape()) << label;
  for (int64_t i = 0; i < want.element_count(); ++i)
    EXPECT_NEAR(got.data<float>()[i], want.data<float>()[i], 1e-5) << label << " " << i;
}

TEST(ActivationLayout, ASplitRegionComputesWhatTheOriginalComputes) {
  ScratchDir dir("activation_layout_split");
  const std::string model = split_between_convs(dir);
  const Tensor x = Tensor::from_vector<float>(DType::kFloat, {1, 16, 6, 6}, input_values(16 * 36));
  const Ran cpu = run(model, "cpu", x), reference = run(model, "cpu_ref", x);
  EXPECT_NE(cpu.report.find("\"Relayout\""), std::string::npos);  // the results below are a blocked region's
  for (const char* y : {"y1", "y2"}) expect_close(cpu.outputs.at(y), reference.outputs.at(y), y);
}

TEST(ActivationLayout, ABlockedRegionComputesWhatTheOriginalComputes) {
  ScratchDir dir("activation_layout");
  const std::string model = mobile_block(dir);
  const Tensor x = Tensor::from_vector<float>(DType::kFloat, {2, 3, 10, 10}, input_values(2 * 3 * 10 * 10));
  const Ran cpu = run(model, "cpu", x), reference = run(model, "cpu_ref", x);
  EXPECT_NE(cpu.report.find("\"Relayout\""), std::string::npos);  // the results below are a blocked region's
  expect_close(cpu.outputs.at("y"), reference.outputs.at("y"), "y");
}

}  // namespace
}  // namespace kiln::passes
