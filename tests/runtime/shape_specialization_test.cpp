// Tests of SessionOptions::specialize: input dims pinned before analysis (a static graph for the
// passes), results equal to the unspecialised session's, and runs of other shapes guarded.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "kiln/session.h"
#include "support/model_builder.h"

namespace kiln {
namespace {

using testing::ModelBuilder;
using testing::ScratchDir;
constexpr int kFloat = onnx::TensorProto::FLOAT;

// y[N,4] = Relu(Reshape(x, Shape(x))): the Shape folds to a constant only when N is known.
std::string shape_arithmetic_model(const ScratchDir& dir) {
  ModelBuilder b;
  b.input("x", kFloat, {std::string("N"), int64_t{4}});
  b.output("y", kFloat, {std::string("N"), int64_t{4}});
  b.node("Shape", {"x"}, {"s"}, "shape");
  b.node("Reshape", {"x", "s"}, {"r"}, "reshape");
  b.node("Relu", {"r"}, {"y"}, "relu");
  return b.save(dir.file("shape_arithmetic.onnx"));
}

Tensor rows(int64_t n) {
  std::vector<float> v;
  for (int64_t i = 0; i < n * 4; ++i) v.push_back(static_cast<float>(i % 5) - 2.0f);
  return Tensor::from_vector<float>(DType::kFloat, {n, 4}, v);
}

SessionOptions specialized(std::map<std::string, std::vector<int64_t>> shapes) {
  SessionOptions options;
  options.input_shapes = std::move(shapes);
  options.specialize = true;
  return options;
}

TEST(ShapeSpecialization, PassesSeeAStaticGraphAndResultsMatch) {
  ScratchDir dir("specialize");
  const std::string model = shape_arithmetic_model(dir);
  auto general = Session::load(model);
  auto fixed = Session::load(model, specialized({{"x", {3, 4}}}));
  ASSERT_TRUE(general.is_ok()) << general.status().to_string();
  ASSERT_TRUE(fixed.is_ok()) << fixed.status().to_string();
  const auto general_report = nlohmann::json::parse(general.value()->report_json());
  const auto fixed_report = nlohmann::json::parse(fixed.value()->report_json());
  EXPECT_GT(general_report["analysis"]["values_symbolic"].get<int>(), 0);
  EXPECT_EQ(fixed_report["analysis"]["values_symbolic"].get<int>(), 0);
  EXPECT_LT(fixed_report["nodes_after_passes"].get<int>(), general_report["nodes_after_passes"].get<int>());
  EXPECT_EQ(fixed_report["options"]["specialize"], "true");

  auto a = general.value()->run({{"x", rows(3)}});
  auto b = fixed.value()->run({{"x", rows(3)}});
  ASSERT_TRUE(a.is_ok() && b.is_ok());
  const Tensor& ya = a.value().at("y");
  const Tensor& yb = b.value().at("y");
  ASSERT_EQ(yb.shape(), (std::vector<int64_t>{3, 4}));
  for (int64_t i = 0; i < 12; ++i) EXPECT_EQ(ya.data<float>()[i], yb.data<float>()[i]);
}

TEST(ShapeSpecialization, OtherShapesAreAShapeGuardFailureNamingTheDim) {
  ScratchDir dir("specialize");
  auto session = Session::load(shape_arithmetic_model(dir), specialized({{"x", {3, 4}}}));
  ASSERT_TRUE(session.is_ok());
  auto out = session.value()->run({{"x", rows(5)}});
  ASSERT_FALSE(out.is_ok());
  EXPECT_EQ(out.status().code(), StatusCode::kShapeGuardFailure);
  EXPECT_NE(out.status().message().find("'x' dim 0 is 5"), std::string::npos) << out.status().message();
  EXPECT_NE(out.status().message().find("[3,4]"), std::string::npos) << out.status().message();
}

TEST(ShapeSpecialization, UnnamedSymbolicDimsAreSpecialisedToOne) {
  ScratchDir dir("specialize");
  auto session = Session::load(shape_arithmetic_model(dir), specialized({}));
  ASSERT_TRUE(session.is_ok()) << session.status().to_string();
  EXPECT_TRUE(session.value()->run({{"x", rows(1)}}).is_ok());
  EXPECT_EQ(session.value()->run({{"x", rows(2)}}).status().code(), StatusCode::kShapeGuardFailure);
}

TEST(ShapeSpecialization, BadShapesAreRejectedAtLoad) {
  ScratchDir dir("specialize");
  const std::string model = shape_arithmetic_model(dir);
  EXPECT_EQ(Session::load(model, specialized({{"z", {3, 4}}})).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(Session::load(model, specialized({{"x", {3, 5}}})).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(Session::load(model, specialized({{"x", {3}}})).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace kiln
