// Tests of Softmax, LogSoftmax and Hardmax: opset < 13 (2-D coercion) and >= 13 (single axis).
#include "ops/family_test_util.h"

namespace kiln::ops::testing {
namespace {

// Expected values computed with numpy in float64: e = np.exp(x - x.max(axis)); e / e.sum(axis).
TEST(Softmax, LastAxis) {
  Tensor x = floats({2, 3}, {1, 2, 3, 4, 5, 7});
  expect_near(run("Softmax", {&x})[0], {0.09003057, 0.24472847, 0.66524096, 0.04201007, 0.1141952, 0.84379473}, {2, 3});
  expect_near(run("LogSoftmax", {&x})[0], {-2.40760596, -1.40760596, -0.40760596, -3.16984602, -2.16984602, -0.16984602},
              {2, 3});
  expect_near(run("Hardmax", {&x})[0], {0, 0, 1, 0, 0, 1}, {2, 3});
}

TEST(Softmax, OpsetsDifferInWhatAxisMeans) {
  Tensor x = floats({2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
  // Opset 13, axis 1: only dim 1 is normalised.
  expect_near(run("Softmax", {&x}, {{"axis", attr_i(1)}}, 13)[0],
              {0.11920292, 0.11920292, 0.88079708, 0.88079708, 0.11920292, 0.11920292, 0.88079708, 0.88079708},
              {2, 2, 2});
  // Opset 11, axis 1: the input is viewed as [2, 4] and each row of 4 is normalised.
  expect_near(run("Softmax", {&x}, {{"axis", attr_i(1)}}, 11)[0],
              {0.0320586, 0.08714432, 0.23688282, 0.64391426, 0.0320586, 0.08714432, 0.23688282, 0.64391426},
              {2, 2, 2});
}

TEST(Softmax, LargeInputsDoNotOverflow) {
  Tensor x = floats({2}, {1000, 1000});
  expect_near(run("Softmax", {&x})[0], {0.5, 0.5}, {2});
  Tensor ties = floats({3}, {2, 5, 5});
  expect_near(run("Hardmax", {&ties})[0], {0, 1, 0}, {3});  // first maximum wins
}

TEST(Softmax, ShapeRuleChecksAxis) {
  auto ok = infer("Softmax", {ir::TensorType{DType::kFloat, sym({"B", 12, "S", "S"})}});
  ASSERT_TRUE(ok.is_ok());
  EXPECT_EQ(ok.value()[0].shape->to_string(), "[B,12,S,S]");
  auto bad = infer("LogSoftmax", {ir::TensorType{DType::kFloat, sym({2, 3})}}, {{"axis", attr_i(2)}});
  ASSERT_FALSE(bad.is_ok());
  EXPECT_NE(bad.status().message().find("node_LogSoftmax"), std::string::npos);
  EXPECT_FALSE(infer("Softmax", {ir::TensorType{DType::kInt32, sym({2})}}).is_ok());
}

}  // namespace
}  // namespace kiln::ops::testing
