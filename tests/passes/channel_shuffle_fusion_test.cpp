// Tests of channel_shuffle_fusion and the channel shuffle it makes: ShuffleNet's Reshape ->
// Transpose -> Reshape becomes one kiln.ChannelShuffle with the same results on cpu_ref; on cpu a
// Concat -> shuffle -> Split between convolutions stays in the region's channels-last layout (no
// reorders but at the edges) and computes what the unoptimized reference computes; a Transpose of
// other axes is left alone.
#include "kiln/passes/channel_shuffle_fusion.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "kiln/session.h"
#include "support/model_builder.h"

namespace kiln::passes {
namespace {

using kiln::testing::ModelBuilder;
using kiln::testing::ScratchDir;

constexpr int kFloat = onnx::TensorProto::FLOAT;

std::vector<float> ramp(size_t n, float scale, float offset = 0) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = offset + scale * static_cast<float>(static_cast<int>(i % 11) - 5);
  return v;
}

// x[1,8,5,5] -> Conv a, Conv b (6 channels each) -> Concat -> Reshape [1,2,6,5,5] -> Transpose(perm)
// -> Reshape [1,12,5,5] -> Split [6, 6] -> Conv -> y1, y2.
std::string shuffle_model(const ScratchDir& dir, const std::vector<int64_t>& perm) {
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
  ModelBuilder::ints_attribute(b.node("Transpose", {"g"}, {"gt"}, "shuffle"), "perm", perm);
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

TEST(ChannelShuffleFusion, TheShuffleBecomesOneOpWithTheSameResults) {
  ScratchDir dir("channel_shuffle");
  const std::string path = shuffle_model(dir, {0, 2, 1, 3, 4});
  const Ran plain = run(path, "cpu_ref", false);
  const Ran fused = run(path, "cpu_ref", true);
  EXPECT_EQ(plain.kernels.count("ChannelShuffle"), 0u);
  EXPECT_EQ(fused.kernels.count("ChannelShuffle"), 1u);
  EXPECT_EQ(fused.kernels.count("Transpose"), 0u);
  expect_same(fused, plain, 0);
}

TEST(ChannelShuffleFusion, OnCpuTheShuffleAndSplitStayChannelsLast) {
  ScratchDir dir("channel_shuffle_cpu");
  const std::string path = shuffle_model(dir, {0, 2, 1, 3, 4});
  const Ran plain = run(path, "cpu_ref", false);
  const Ran cpu = run(path, "cpu", true);
  expect_same(cpu, plain, 1e-5);
  // Reorders at the region's edges only: x in, y1 and y2 out (6 and 12 channels: channels-last).
  const int reorders = (cpu.kernels.count("Transpose") ? cpu.kernels.at("Transpose") : 0) +
                       (cpu.kernels.count("Relayout") ? cpu.kernels.at("Relayout") : 0);
  EXPECT_EQ(reorders, 3);
}

TEST(ChannelShuffleFusion, OtherTransposesStay) {
  ScratchDir dir("channel_shuffle_other");
  const std::string path = shuffle_model(dir, {0, 1, 2, 4, 3});  // swaps the spatial axes: no shuffle
  const Ran fused = run(path, "cpu_ref", true);
  EXPECT_EQ(fused.kernels.count("ChannelShuffle"), 0u);
  expect_same(fused, run(path, "cpu_ref", false), 0);
}

}  // namespace
}  // namespace kiln::passes
