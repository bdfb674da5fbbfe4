// Tests of shape profiles: parsing, validation (min <= opt <= max, symbols inputs have), the
// profile's max planned and its arena reserved at load, the load-time plan at opt, and the guard on runs: reject names the input, dim, symbol and range;
// specialize runs on a variant compiled for the shapes; pad runs every shape on its bucket and
// cuts the outputs back; all are counted in the report.
#include "kiln/runtime/shape_profile.h"

#include "kiln/runtime/shape_padding.h"

#include <gtest/gtest.h>

#include <cmath>

#include <nlohmann/json.hpp>

#include "kiln/session.h"
#include "support/model_builder.h"

namespace kiln {
namespace {

using testing::ModelBuilder;
using testing::ScratchDir;
constexpr int kFloat = onnx::TensorProto::FLOAT;

// y[batch,4] = Relu(Abs(x[batch,4]) - x): max(0, |x| - x), an intermediate in the arena. Run on
// cpu_ref, so that no fusion removes the intermediate.
std::string relu_model(const ScratchDir& dir) {
  ModelBuilder b;
  b.input("x", kFloat, {std::string("batch"), int64_t{4}});
  b.output("y", kFloat, {std::string("batch"), int64_t{4}});
  b.node("Abs", {"x"}, {"a"}, "abs");
  b.node("Sub", {"a", "x"}, {"d"}, "sub");
  b.node("Relu", {"d"}, {"y"}, "relu");
  return b.save(dir.file("relu.onnx"));
}

float expected_y(float x) { return std::max(0.0f, std::fabs(x) - x); }

SessionOptions profiled(OutOfProfile policy) {
  SessionOptions options;
  options.providers = {"cpu_ref"};
  options.shape_profile = {{"batch", {2, 4, 8}}};
  options.out_of_profile = policy;
  return options;
}

nlohmann::json report_of(const Session& s) { return nlohmann::json::parse(s.report_json()); }

TEST(ShapeProfile, ParsesRangesAndRefusesMalformedOnes) {
  auto p = runtime::parse_shape_profile("batch=1:8:32,seq=1:128:512");
  ASSERT_TRUE(p.is_ok()) << p.status().to_string();
  EXPECT_EQ(p.value().at("seq").opt, 128);
  EXPECT_EQ(p.value().at("batch").max, 32);
  EXPECT_TRUE(runtime::parse_shape_profile("").value().empty());
  for (const char* bad : {"batch", "batch=1:8", "=1:2:3", "batch=a:2:3", "batch=1:2:-3"})
    EXPECT_EQ(runtime::parse_shape_profile(bad).status().code(), StatusCode::kInvalidArgument) << bad;
}

TEST(ShapeProfile, BadProfilesAreInvalidArgumentsAtLoad) {
  ScratchDir dir("profile");
  SessionOptions inverted;
  inverted.shape_profile = {{"batch", {8, 4, 2}}};
  EXPECT_EQ(Session::load(relu_model(dir), inverted).status().code(), StatusCode::kInvalidArgument);
  SessionOptions unknown;
  unknown.shape_profile = {{"seq", {1, 2, 3}}};
  const Status s = Session::load(relu_model(dir), unknown).status();
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("batch"), std::string::npos) << "names the symbols there are: " << s.message();
}

TEST(ShapeProfile, RejectNamesTheDimAndTheLoadPlanUsesOpt) {
  ScratchDir dir("profile");
  auto session = Session::load(relu_model(dir), profiled(OutOfProfile::kReject));
  ASSERT_TRUE(session.is_ok()) << session.status().to_string();
  const nlohmann::json loaded = report_of(*session.value());
  EXPECT_EQ(loaded["memory"]["input_shapes"][0], nlohmann::json::array({4, 4}));
  // The profile's max (batch 8) was planned at load and its arena reserved: no run grows it.
  EXPECT_EQ(loaded["execution"]["recent_variants"][0]["input_shapes"][0], nlohmann::json::array({8, 4}));
  EXPECT_EQ(loaded["execution"]["profile_max_arena_bytes"], loaded["execution"]["recent_variants"][0]["arena_bytes"]);
  EXPECT_GE(loaded["execution"]["profile_max_arena_bytes"].get<int64_t>(), 8 * 4 * 4) << "at least one [8,4] intermediate";
  EXPECT_LT(loaded["execution"]["recent_variants"][1]["arena_bytes"].get<int64_t>(),
            loaded["execution"]["profile_max_arena_bytes"].get<int64_t>());
  EXPECT_TRUE(session.value()->run({{"x", random_tensor(DType::kFloat, {8, 4}, 1)}}).is_ok());
  const Status outside = session.value()->run({{"x", random_tensor(DType::kFloat, {9, 4}, 1)}}).status();
  EXPECT_EQ(outside.code(), StatusCode::kShapeGuardFailure);
  EXPECT_NE(outside.message().find("input 'x' dim 0 (batch) is 9, outside the profile batch=2:4:8"), std::string::npos)
      << outside.message();
  const nlohmann::json g = report_of(*session.value())["guards"];
  EXPECT_EQ(g["profile"], "batch=2:4:8");
  EXPECT_EQ(g["policy"], "reject");
  EXPECT_EQ(g["checks"], 2);
  EXPECT_EQ(g["failures"], 1);
  EXPECT_EQ(g["recent_failures"][0]["action"], "rejected");
  EXPECT_EQ(g["recent_failures"][0]["value"], 9);
}

TEST(ShapeProfile, SpecializeRunsOutsideShapesOnTheirOwnVariant) {
  ScratchDir dir("profile");
  auto session = Session::load(relu_model(dir), profiled(OutOfProfile::kSpecialize));
  ASSERT_TRUE(session.is_ok());
  auto out = session.value()->run({{"x", random_tensor(DType::kFloat, {1, 4}, 2)}});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  EXPECT_EQ(out.value().at("y").shape(), (std::vector<int64_t>{1, 4}));
  const nlohmann::json r = report_of(*session.value());
  EXPECT_EQ(r["guards"]["failures"], 1);
  EXPECT_EQ(r["guards"]["recent_failures"][0]["action"], "specialized");
  EXPECT_EQ(r["execution"]["variants_built"], 2);
}

TEST(ShapeProfile, PadRunsEveryShapeOnItsBucketAndCutsTheOutputsBack) {
  ScratchDir dir("profile");
  auto session = Session::load(relu_model(dir), profiled(OutOfProfile::kPad));
  ASSERT_TRUE(session.is_ok());
  for (int64_t n : {3, 1, 4, 5, 3}) {
    const Tensor x = random_tensor(DType::kFloat, {n, 4}, static_cast<uint64_t>(n));
    auto out = session.value()->run({{"x", x}});
    ASSERT_TRUE(out.is_ok()) << n << ": " << out.status().to_string();
    const Tensor& y = out.value().at("y");
    ASSERT_EQ(y.shape(), (std::vector<int64_t>{n, 4}));
    for (int64_t i = 0; i < y.element_count(); ++i) EXPECT_EQ(y.data<float>()[i], expected_y(x.data<float>()[i]));
  }
  EXPECT_EQ(session.value()->run({{"x", random_tensor(DType::kFloat, {9, 4}, 1)}}).status().code(), StatusCode::kShapeGuardFailure);
  const nlohmann::json r = report_of(*session.value());
  // Buckets 2, 4, 8: 3 -> 4, 1 -> 2 (below min: a guard failure, padded), 4, 5 -> 8, 3 -> 4.
  EXPECT_EQ(r["execution"]["variants_built"], 3);
  EXPECT_EQ(r["guards"]["padded_runs"], 4);
  EXPECT_EQ(r["guards"]["failures"], 2);
  EXPECT_EQ(r["guards"]["recent_failures"][0]["action"], "padded");
  EXPECT_EQ(r["guards"]["recent_failures"][1]["action"], "rejected");
  EXPECT_NEAR(r["guards"]["padding_overhead"].get<double>(), (4.0 + 2 + 8 + 4) / (3 + 1 + 5 + 3) - 1, 1e-9);
}

TEST(ShapeProfile, ResizedCopiesPadWithZerosAndCut) {
  const Tensor t = Tensor::from_vector<float>(DType::kFloat, {2, 3}, {1, 2, 3, 4, 5, 6});
  const Tensor padded = runtime::resized_copy(t, {3, 4});
  EXPECT_EQ(std::vector<float>(padded.data<float>(), padded.data<float>() + 12),
            (std::vector<float>{1, 2, 3, 0, 4, 5, 6, 0, 0, 0, 0, 0}));
  const Tensor back = runtime::resized_copy(padded, {2, 3});
  EXPECT_EQ(std::vector<float>(back.data<float>(), back.data<float>() + 6), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(runtime::resized_copy(t, {0, 3}).element_count(), 0);
}

}  // namespace
}  // namespace kiln
