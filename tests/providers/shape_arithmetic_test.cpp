// Tests of the cpu provider's shape arithmetic: which nodes qualify (integer and boolean tensors;
// Shape of a float tensor), and a dynamic-batch Reshape whose target shape is computed at run
// time running on cpu alone, fail-closed, with nothing falling back.
#include "kiln/providers/cpu/shape_arithmetic.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "kiln/session.h"
#include "support/model_builder.h"

namespace kiln::providers::cpu {
namespace {

using kiln::testing::ModelBuilder;
using kiln::testing::ScratchDir;

// A one-node graph `op`(inputs of the given dtypes, rank 1) -> output of `out`.
bool qualifies(const std::string& op, std::vector<DType> inputs, DType out) {
  ir::Graph g;
  std::vector<ir::Value*> in;
  for (size_t i = 0; i < inputs.size(); ++i) in.push_back(g.add_value("in" + std::to_string(i), ir::make_type(inputs[i], {4})));
  ir::Value* y = g.add_value("y", ir::make_type(out, {4}));
  return is_shape_arithmetic(*g.add_node(op, in, {y}, "n", "", 17));
}

TEST(ShapeArithmetic, IntegerAndBooleanNodesQualifyFloatOnesDoNot) {
  EXPECT_TRUE(qualifies("Shape", {DType::kFloat}, DType::kInt64));
  EXPECT_TRUE(qualifies("Gather", {DType::kInt64, DType::kInt64}, DType::kInt64));
  EXPECT_TRUE(qualifies("Where", {DType::kBool, DType::kInt64, DType::kInt64}, DType::kInt64));
  EXPECT_TRUE(qualifies("Equal", {DType::kInt32, DType::kInt32}, DType::kBool));
  EXPECT_FALSE(qualifies("Gather", {DType::kFloat, DType::kInt64}, DType::kFloat));  // an embedding lookup
  EXPECT_FALSE(qualifies("Cast", {DType::kInt64}, DType::kFloat));
  EXPECT_FALSE(qualifies("Add", {DType::kFloat, DType::kFloat}, DType::kFloat));
  EXPECT_FALSE(qualifies("Erf", {DType::kInt64}, DType::kInt64));  // not a shape op
}

// x[N,4] -> Reshape(x, Concat(Unsqueeze(Gather(Shape(x), 0)), [2, 2])) -> y[N,2,2]
TEST(ShapeArithmetic, DynamicReshapeRunsOnCpuAloneFailClosed) {
  ScratchDir dir("shape_arithmetic");
  ModelBuilder b(13);
  b.input("x", onnx::TensorProto::FLOAT, {std::string("N"), int64_t{4}});
  b.output("y", onnx::TensorProto::FLOAT, {std::string("N"), int64_t{2}, int64_t{2}});
  onnx::TensorProto* zero = b.graph().add_initializer();
  zero->set_name("zero");
  zero->set_data_type(onnx::TensorProto::INT64);
  zero->add_int64_data(0);
  onnx::TensorProto* axes = b.graph().add_initializer();
  axes->set_name("axes");
  axes->set_data_type(onnx::TensorProto::INT64);
  axes->add_dims(1);
  axes->add_int64_data(0);
  onnx::TensorProto* tail = b.graph().add_initializer();
  tail->set_name("tail");
  tail->set_data_type(onnx::TensorProto::INT64);
  tail->add_dims(2);
  tail->add_int64_data(2);
  tail->add_int64_data(2);
  b.node("Shape", {"x"}, {"s"}, "shape");
  b.node("Gather", {"s", "zero"}, {"n"}, "batch");
  b.node("Unsqueeze", {"n", "axes"}, {"n1"}, "unsqueeze");
  onnx::NodeProto& concat = b.node("Concat", {"n1", "tail"}, {"target"}, "target_shape");
  onnx::AttributeProto* axis = concat.add_attribute();
  axis->set_name("axis");
  axis->set_type(onnx::AttributeProto::INT);
  axis->set_i(0);
  b.node("Reshape", {"x", "target"}, {"y"}, "reshape");

  SessionOptions options;
  options.providers = {"cpu"};  // no fallback
  auto session = Session::load(b.save(dir.file("model.onnx")), options);
  ASSERT_TRUE(session.is_ok()) << session.status().to_string();
  std::vector<float> values(12);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i) - 5.5f;
  auto out = session.value()->run({{"x", Tensor::from_vector<float>(DType::kFloat, {3, 4}, values)}});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  const Tensor& y = out.value().at("y");
  ASSERT_EQ(y.shape(), (std::vector<int64_t>{3, 2, 2}));
  for (size_t i = 0; i < values.size(); ++i) EXPECT_EQ(y.data<float>()[i], values[i]);
  const auto report = nlohmann::json::parse(session.value()->report_json());
  EXPECT_EQ(report["partition"]["fallback_nodes"], 0);
  for (const auto& n : report["partition"]["nodes"]) EXPECT_EQ(n["provider"], "cpu") << n["node"];
}

}  // namespace
}  // namespace kiln::providers::cpu
