// Tests of channel_shuffle_fusion: on IR text, ShuffleNet's Reshape -> Transpose -> Reshape becomes
// one kiln.ChannelShuffle with its group count and the three nodes as origins; a Transpose of other
// axes, a shuffle whose intermediate another node reads, and one of unknown shape are left alone.
// End to end, the fused shuffle computes what the three ops compute on cpu_ref, and on cpu a
// Concat -> shuffle -> Split between convolutions computes what the unoptimized reference computes
// (activation_layout_test pins the shuffle's channels-last region on IR text).
#include "kiln/passes/channel_shuffle_fusion.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "kiln/session.h"
#include "passes/pass_test_util.h"
#include "support/model_builder.h"

namespace kiln::passes {
namespace {

using kiln::testing::ModelBuilder;
using kiln::testing::ScratchDir;

// x[1,12,5,5] -> Reshape [1,2,6,5,5] -> Transpose(perm) -> Reshape [1,12,5,5], as IR text; the
// grouped value's type and the graph's outputs as given.
struct ShuffleText {
  std::string perm = "[0,2,1,3,4]";
  std::string grouped_type = ": float[1,2,6,5,5]";
  std::string outputs = "%y";
};

std::string shuffle_text(const ShuffleText& s) {
  return R"(graph main (%x: float[1,12,5,5]) -> ()" + s.outputs + R"() {
    %grouped = constant int64[5] [1,2,6,5,5]
    %merged = constant int64[4] [1,12,5,5]
    %g)" + s.grouped_type + R"( = Reshape 'group'(%x, %grouped)
    %t = Transpose 'shuffle'(%g) {perm=)" + s.perm + R"(}
    %y: float[1,12,5,5] = Reshape 'merge'(%t, %merged)
  })";
}

TEST(ChannelShuffleFusion, ReshapeTransposeReshapeIsOneChannelShuffle) {
  const testing::Rewritten r = testing::rewrite_ir(shuffle_text({}), fuse_channel_shuffles);
  EXPECT_TRUE(r.changed);
  EXPECT_EQ(r.printed,
            "graph main (%x: float[1,12,5,5]) -> (%y: float[1,12,5,5]) {\n"
            "  %y: float[1,12,5,5] = kiln.ChannelShuffle 'shuffle'(%x) {groups=2}\n"
            "}");
  EXPECT_EQ(testing::origins_of(r, "shuffle"), (std::vector<std::string>{"group", "shuffle", "merge"}));
}

TEST(ChannelShuffleFusion, TheGroupCountIsTheReshapesSecondDim) {
  const testing::Rewritten r = testing::rewrite_ir(R"(graph main (%x: float[2,12,4]) -> (%y) {
    %grouped = constant int64[4] [2,3,4,4]
    %merged = constant int64[3] [2,12,4]
    %g: float[2,3,4,4] = Reshape(%x, %grouped)
    %t = Transpose 'shuffle'(%g) {perm=[0,2,1,3]}
    %y: float[2,12,4] = Reshape(%t, %merged)
  })",
                                                   fuse_channel_shuffles);
  EXPECT_TRUE(r.changed);
  EXPECT_EQ(r.printed,
            "graph main (%x: float[2,12,4]) -> (%y: float[2,12,4]) {\n"
            "  %y: float[2,12,4] = kiln.ChannelShuffle 'shuffle'(%x) {groups=3}\n"
            "}");
}

TEST(ChannelShuffleFusion, ATransposeOfOtherAxesStays) {
  const testing::Rewritten r = testing::rewrite_ir(shuffle_text({.perm = "[0,1,2,4,3]"}), fuse_channel_shuffles);
  EXPECT_FALSE(r.changed);
  EXPECT_NE(r.printed.find("Transpose 'shuffle'(%g) {perm=[0,1,2,4,3]}"), std::string::npos) << r.printed;
}

TEST(ChannelShuffleFusion, AShuffleWhoseTransposeAnotherNodeReadsStays) {
  EXPECT_FALSE(testing::rewrite_ir(shuffle_text({.outputs = "%y, %t"}), fuse_channel_shuffles).changed);
  EXPECT_FALSE(testing::rewrite_ir(shuffle_text({.outputs = "%y, %g"}), fuse_channel_shuffles).changed);
}

TEST(ChannelShuffleFusion, AShuffleOfUnknownShapeStays) {
  EXPECT_FALSE(testing::rewrite_ir(shuffle_text({.grouped_type = ""}), fuse_channel_shuffles).changed);
  EXPECT_FALSE(testing::rewrite_ir(shuffle_text({.grouped_type = ": float[1,2,6,5,?]"}), fuse_channel_shuffles).changed);
}

constexpr int kFloat = onnx::TensorProto::FLOAT;

std::vector<float> ramp(size_t n, float scale, float offset = 0) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = offset + scale * static_cast<float>(static_cast<int>(i % 11) - 5);
  return v;
}

// x[1,8,5,5] -> Conv a, Conv b (6 channels each) -> Concat -> Reshape [1,2,6,5,5] -> Transpose
// [0,2,1,3,4] -> Reshape [1,12,5,5] -> Split [6, 6] -> Conv -> y1, y2.
std::string shuffle_model(const ScratchDir& dir) {
  ModelBuilder b(13);
  b.input("x", kFloat, {int64_t{1}, int64_t{8}, int64_t{5}, int64_t{5}});
  for (const char* y : {"y1", "y2"}) b.output(y, kFloat, {int64_t{1}, int64_t{6}, int64_t{5}, int64_t{5}});
  b.float_initializer("wa", {6, 8, 1, 1}, ramp(48, 0.1f));
  b.float_initializer("wb", {6, 8, 1, 1}, ramp(48, 0.07f, 0.01f));
  b.float_initializer("w1", {6, 6, 1, 1}, ramp(36, 0.05f));
  b.float_initializer("w2", {6, 6, 1, 1}, ramp(36, 0.03f, 0.02f));
  b.int64_initializer("grouped", {5}, {1, 2, 6, 5, 5});
  b.int64_initializer("merged", {4}, {1, 12, 5, 5});
  b.int64_initializer("halves", {2}, {6, 6});
  b.node("Conv", {"x", "wa"}, {"a"}, "conv_a");
  b.node("Conv", {"x", "wb"}, {"b"}, "conv_b");
  ModelBuilder::int_attribute(b.node("Concat", {"a", "b"}, {"joined"}, "concat"), "axis", 1);
  b.node("Reshape", {"joined", "grouped"}, {"g"}, "group");
  ModelBuilder::ints_attribute(b.node("Transpose", {"g"}, {"gt"}, "shuffle"), "perm", {0, 2, 1, 3, 4});
  b.node("Reshape", {"gt", "merged"}, {"shuffled"}, "merge");
  ModelBuilder::int_attribute(b.node("Split", {"shuffled", "halves"}, {"h1", "h2"}, "split"), "axis", 1);
  b.node("Conv", {"h1", "w1"}, {"y1"}, "conv_1");
  b.node("Conv", {"h2", "w2"}, {"y2"}, "conv_2");
  return b.save(dir.file("shuffle.onnx"));
}

struct Ran {
  std::map<std::string, Tensor> outputs;
  std::map<std::string, int> kernels;  // op -> count
};

Ran run(const std::string& path, const std::string& provider, bool optimize) {
  SessionOptions options;
  options.providers = {provider};
  options.optimize = optimize;
  auto session = Session::load(path, options);
  EXPECT_TRUE(session.is_ok()) << session.status().to_string();
  if (!session.is_ok()) return {};
  auto out = session.value()->run({{"x", Tensor::from_vector<float>(DType::kFloat, {1, 8, 5, 5}, ramp(200, 0.2f, 0.1f))}});
  EXPECT_TRUE(out.is_ok()) << out.status().to_string();
  Ran ran;
  if (out.is_ok()) ran.outputs = out.value();
  const nlohmann::json report = nlohmann::json::parse(session.value()->report_json());
  for (const auto& k : report["kernels"]) ran.kernels[k["op"].get<std::string>()] += k.value("count", 1);
  return ran;
}

void expect_same(const Ran& got, const Ran& want, double tolerance) {
  for (const char* y : {"y1", "y2"}) {
    const Tensor& g = got.outputs.at(y);
    const Tensor& w = want.outputs.at(y);
    ASSERT_EQ(g.shape(), w.shape());
    for (int64_t i = 0; i < w.element_count(); ++i) EXPECT_NEAR(g.data<float>()[i], w.data<float>()[i], tolerance) << y << " " << i;
  }
}

TEST(ChannelShuffleFusion, TheFusedShuffleComputesWhatTheThreeOpsCompute) {
  ScratchDir dir("channel_shuffle");
  const std::string path = shuffle_model(dir);
  const Ran fused = run(path, "cpu_ref", true);
  EXPECT_EQ(fused.kernels.count("ChannelShuffle"), 1u);  // the results below are the fused op's
  expect_same(fused, run(path, "cpu_ref", false), 0);
}

TEST(ChannelShuffleFusion, OnCpuTheShuffleAndSplitStayChannelsLast) {
  ScratchDir dir("channel_shuffle_cpu");
  const std::string path = shuffle_model(dir);
  const Ran cpu = run(path, "cpu", true);
  expect_same(cpu, run(path, "cpu_ref", false), 1e-5);
  // Reorders at the region's edges only: x in, y1 and y2 out (6 and 12 channels: channels-last).
  const int reorders = (cpu.kernels.count("Transpose") ? cpu.kernels.at("Transpose") : 0) +
                       (cpu.kernels.count("Relayout") ? cpu.kernels.at("Relayout") : 0);
  EXPECT_EQ(reorders, 3);
}

}  // namespace
}  // namespace kiln::passes
