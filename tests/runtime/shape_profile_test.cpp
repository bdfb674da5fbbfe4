// Tests of shape profiles: parsing, validation (min <= opt <= max, symbols inputs have), the
// load-time plan at opt, and the guard on runs: reject names the input, dim, symbol and range;
// specialize runs on a variant compiled for the shapes; both are counted in the report.
#include "kiln/runtime/shape_profile.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "kiln/session.h"
#include "support/model_builder.h"

namespace kiln {
namespace {

using testing::ModelBuilder;
using testing::ScratchDir;
constexpr int kFloat = onnx::TensorProto::FLOAT;

// y[batch,4] = Relu(x[batch,4])
std::string relu_model(const ScratchDir& dir) {
  ModelBuilder b;
  b.input("x", kFloat, {std::string("batch"), int64_t{4}});
  b.output("y", kFloat, {std::string("batch"), int64_t{4}});
  b.node("Relu", {"x"}, {"y"}, "relu");
  return b.save(dir.file("relu.onnx"));
}

SessionOptions profiled(OutOfProfile policy) {
  SessionOptions options;
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
  EXPECT_EQ(report_of(*session.value())["memory"]["input_shapes"][0], nlohmann::json::array({4, 4}));
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

}  // namespace
}  // namespace kiln
