// Tests of lowering after partition: the provider-specific passes (layouts, Winograd, element-wise
// chains) rewrite only the nodes their provider runs, after the partition, and the graph is placed
// again; nodes placed on another provider stay as they are; a provider that prefers nothing
// (cpu_ref) lowers nothing.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>

#include "kiln/session.h"
#include "support/model_builder.h"

namespace kiln {
namespace {

using testing::ModelBuilder;
using testing::ScratchDir;

// x[1,16,8,8] -> Conv 'conv1' (16, 3x3) -> Relu -> Cast(double) -> Conv 'conv2' (16, 1x1, double
// weights) -> y: conv1 runs on cpu (float32), conv2 only on cpu_ref (cpu declines float64).
std::string mixed_model(const ScratchDir& dir) {
  ModelBuilder b(13);
  b.input("x", onnx::TensorProto::FLOAT, {int64_t{1}, int64_t{16}, int64_t{8}, int64_t{8}});
  b.output("y", onnx::TensorProto::DOUBLE, {int64_t{1}, int64_t{16}, int64_t{8}, int64_t{8}});
  std::vector<float> w1(16 * 16 * 9), w2(16 * 16);
  for (size_t i = 0; i < w1.size(); ++i) w1[i] = 0.02f * std::sin(0.1f * static_cast<float>(i));
  for (size_t i = 0; i < w2.size(); ++i) w2[i] = 0.05f * std::cos(0.3f * static_cast<float>(i));
  b.float_initializer("w1", {16, 16, 3, 3}, w1);
  b.float_initializer("w2", {16, 16, 1, 1}, w2);
  onnx::NodeProto& conv1 = b.node("Conv", {"x", "w1"}, {"c1"}, "conv1");
  onnx::AttributeProto* pads = conv1.add_attribute();
  pads->set_name("pads");
  pads->set_type(onnx::AttributeProto::INTS);
  for (int i = 0; i < 4; ++i) pads->add_ints(1);
  b.node("Relu", {"c1"}, {"r"}, "relu");
  for (const auto& [from, to] : {std::pair{"r", "r64"}, std::pair{"w2", "w2_64"}}) {
    onnx::AttributeProto* type = b.node("Cast", {from}, {to}, std::string("cast_") + from).add_attribute();
    type->set_name("to");
    type->set_type(onnx::AttributeProto::INT);
    type->set_i(onnx::TensorProto::DOUBLE);
  }
  b.node("Conv", {"r64", "w2_64"}, {"y"}, "conv2");
  return b.save(dir.file("mixed.onnx"));
}

nlohmann::json report_of(const std::string& model, const SessionOptions& options) {
  auto session = Session::load(model, options);
  EXPECT_TRUE(session.is_ok()) << session.status().to_string();
  return session.is_ok() ? nlohmann::json::parse(session.value()->report_json()) : nlohmann::json{};
}

TEST(ProviderLowering, OnlyTheNodesAProviderRunsAreLoweredForIt) {
  ScratchDir dir("lowering");
  SessionOptions options;
  options.allow_fallback = {"cpu_ref"};
  const nlohmann::json report = report_of(mixed_model(dir), options);
  std::map<std::string, nlohmann::json> nodes;
  for (const nlohmann::json& n : report["partition"]["nodes"]) nodes[n["node"]] = n;
  ASSERT_TRUE(nodes.count("conv1") && nodes.count("conv2")) << report["partition"].dump();
  EXPECT_EQ(nodes["conv1"]["op"], "FusedConv");
  EXPECT_EQ(nodes["conv1"]["provider"], "cpu");
  EXPECT_EQ(nodes["conv2"]["op"], "Conv") << "placed on cpu_ref: not rewritten for cpu";
  EXPECT_EQ(nodes["conv2"]["provider"], "cpu_ref");
  // conv1's region runs in the target's widest block, with a reorder out of it before the Cast.
  const std::vector<std::string> layouts = report["target"]["activation_layouts"];
  ASSERT_FALSE(layouts.empty());
  bool relayout = false;
  for (const auto& [name, n] : nodes) relayout = relayout || (n["op"] == "Relayout" && n["provider"] == "cpu");
  EXPECT_TRUE(relayout) << report["partition"].dump();
  // The lowering ran after partition, for cpu, and changed the graph.
  bool lowered = false;
  for (const nlohmann::json& run : report["passes"]) {
    if (run["name"] == "activation_layout") {
      EXPECT_EQ(run["provider"], "cpu") << "a lowering pass runs only after partition";
      lowered = lowered || run["changed"].get<bool>();
    }
    if (run["name"] == "constant_folding") {
      EXPECT_EQ(run["provider"], "");
    }
  }
  EXPECT_TRUE(lowered);
}

TEST(ProviderLowering, AProviderThatPrefersNothingLowersNothing) {
  ScratchDir dir("lowering");
  SessionOptions options;
  options.providers = {"cpu_ref"};
  const nlohmann::json report = report_of(mixed_model(dir), options);
  for (const nlohmann::json& run : report["passes"]) EXPECT_EQ(run["provider"], "") << run.dump();
  for (const nlohmann::json& n : report["partition"]["nodes"]) {
    EXPECT_NE(n["op"], "Relayout");
    EXPECT_EQ(n["provider"], "cpu_ref");
  }
}

TEST(ProviderLowering, NodesPlacedOnAnotherProviderAreNotLoweredForCpu) {
  ScratchDir dir("lowering");
  SessionOptions options;
  options.providers = {"cpu_ref", "cpu"};  // cpu_ref first: it takes every node, cpu lowers none
  const nlohmann::json report = report_of(mixed_model(dir), options);
  for (const nlohmann::json& n : report["partition"]["nodes"]) {
    EXPECT_NE(n["op"], "Relayout") << n.dump();
    EXPECT_EQ(n["provider"], "cpu_ref") << n.dump();
  }
}

}  // namespace
}  // namespace kiln
