// Tests of the element-wise unary ops: shape rule, dtypes, attribute defaults, kernel values.
#include <limits>

#include "ops/family_test_util.h"

namespace kiln::ops::testing {
namespace {

const Tensor kX = floats({5}, {-2.0f, -0.5f, 0.0f, 0.5f, 3.0f});

TEST(ElementwiseUnary, ActivationsMatchNumpy) {
  // Expected values from numpy 1.24 float32 formulas (e.g. 1/(1+np.exp(-x)) for Sigmoid).
  expect_near(run("Relu", {&kX})[0], {0, 0, 0, 0.5, 3}, {5});
  expect_near(run("Sigmoid", {&kX})[0], {0.11920293, 0.37754068, 0.5, 0.62245935, 0.95257413}, {5});
  expect_near(run("Tanh", {&kX})[0], {-0.9640276, -0.4621172, 0, 0.4621172, 0.9950548}, {5});
  expect_near(run("HardSwish", {&kX})[0], {-0.3333333, -0.20833333, 0, 0.29166666, 3}, {5});
  expect_near(run("Softplus", {&kX})[0], {0.12692805, 0.474077, 0.6931472, 0.974077, 3.0485873}, {5});
  expect_near(run("Selu", {&kX})[0], {-1.5201665, -0.6917582, 0, 0.5253505, 3.152103}, {5});
  expect_near(run("Elu", {&kX})[0], {-0.86466473, -0.39346933, 0, 0.5, 3}, {5});
  // Hand-computed: LeakyRelu alpha 0.1; HardSigmoid max(0, min(1, 0.2x + 0.5)).
  expect_near(run("LeakyRelu", {&kX}, {{"alpha", attr_f(0.1f)}})[0], {-0.2, -0.05, 0, 0.5, 3}, {5});
  expect_near(run("HardSigmoid", {&kX})[0], {0.1, 0.4, 0.5, 0.6, 1.0}, {5});
  expect_near(run("ThresholdedRelu", {&kX}, {{"alpha", attr_f(0.4f)}})[0], {0, 0, 0, 0.5, 3}, {5});
}

TEST(ElementwiseUnary, MathFunctions) {
  // math.erf(0.5) = 0.5204998778, math.erf(-2) = -0.9953222650.
  expect_near(run("Erf", {&kX})[0], {-0.99532227, -0.52049988, 0, 0.52049988, 0.99997791}, {5});
  expect_near(run("Abs", {&kX})[0], {2, 0.5, 0, 0.5, 3}, {5});
  expect_near(run("Neg", {&kX})[0], {2, 0.5, 0, -0.5, -3}, {5});
  expect_near(run("Sign", {&kX})[0], {-1, -1, 0, 1, 1}, {5});
  expect_near(run("Reciprocal", {&kX})[0], {-0.5, -2, std::numeric_limits<double>::infinity(), 2, 1 / 3.0}, {5});
  // np.round rounds halves to even: [0.5, 1.5, 2.5, -0.5, -1.5] -> [0, 2, 2, -0, -2].
  Tensor halves = floats({5}, {0.5f, 1.5f, 2.5f, -0.5f, -1.5f});
  expect_near(run("Round", {&halves})[0], {0, 2, 2, 0, -2}, {5});
  expect_near(run("Floor", {&halves})[0], {0, 1, 2, -1, -2}, {5});
  expect_near(run("Ceil", {&halves})[0], {1, 2, 3, 0, -1}, {5});
}

TEST(ElementwiseUnary, IntegerAbsAndNegAreExact) {
  const int64_t big = (int64_t{1} << 60) + 1;  // not representable in double
  Tensor x = int64s({2}, {-big, 7});
  EXPECT_EQ(values<int64_t>(run("Abs", {&x})[0]), (std::vector<int64_t>{big, 7}));
  EXPECT_EQ(values<int64_t>(run("Neg", {&x})[0]), (std::vector<int64_t>{big, -7}));
  EXPECT_EQ(values<int64_t>(run("Relu", {&x})[0]), (std::vector<int64_t>{0, 7}));
}

TEST(ElementwiseUnary, PredicatesGiveBool) {
  const float inf = std::numeric_limits<float>::infinity();
  Tensor x = floats({4}, {1.0f, inf, -inf, std::nanf("")});
  auto nan = run("IsNaN", {&x})[0];
  EXPECT_EQ(nan.dtype(), DType::kBool);
  EXPECT_EQ(values<bool>(nan), (std::vector<bool>{false, false, false, true}));
  EXPECT_EQ(values<bool>(run("IsInf", {&x})[0]), (std::vector<bool>{false, true, true, false}));
  EXPECT_EQ(values<bool>(run("IsInf", {&x}, {{"detect_negative", attr_i(0)}})[0]),
            (std::vector<bool>{false, true, false, false}));
  Tensor b = bools({2}, {true, false});
  EXPECT_EQ(values<bool>(run("Not", {&b})[0]), (std::vector<bool>{false, true}));
}

TEST(ElementwiseUnary, Float16ComputesInFloat) {
  Tensor h = Tensor::allocate(DType::kFloat16, {2});
  h.data<Float16>()[0] = ir::to_float16(4.0f);
  h.data<Float16>()[1] = ir::to_float16(0.25f);
  auto y = run("Sqrt", {&h})[0];
  EXPECT_EQ(y.dtype(), DType::kFloat16);
  expect_near(y, {2.0, 0.5}, {2});
}

TEST(ElementwiseUnary, ClipAttributeAndInputForms) {
  // Hand-computed clip of [-2, -0.5, 0, 0.5, 3] to [-1, 1].
  expect_near(run("Clip", {&kX}, {{"min", attr_f(-1)}, {"max", attr_f(1)}}, 6)[0], {-1, -0.5, 0, 0.5, 1}, {5});
  Tensor lo = floats({}, {-1}), hi = floats({}, {1});
  expect_near(run("Clip", {&kX, &lo, &hi}, {}, 13)[0], {-1, -0.5, 0, 0.5, 1}, {5});
  expect_near(run("Clip", {&kX, nullptr, &hi}, {}, 13)[0], {-2, -0.5, 0, 0.5, 1}, {5});
  Tensor i8 = typed<int8_t>(DType::kInt8, {3}, {-128, 5, 127});
  Tensor i8hi = typed<int8_t>(DType::kInt8, {}, {100});
  EXPECT_EQ(values<int8_t>(run("Clip", {&i8, nullptr, &i8hi}, {}, 12)[0]), (std::vector<int8_t>{-128, 5, 100}));
}

TEST(ElementwiseUnary, ShapeRuleKeepsSymbolicDims) {
  auto r = infer("Relu", {ir::TensorType{DType::kFloat, sym({"N", 3})}});
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r.value()[0].shape->to_string(), "[N,3]");
  auto nan = infer("IsNaN", {ir::TensorType{DType::kFloat, sym({"N"})}});
  ASSERT_TRUE(nan.is_ok());
  EXPECT_EQ(nan.value()[0].dtype, DType::kBool);
}

TEST(ElementwiseUnary, RejectsBadDtypeAndArity) {
  Tensor i = int64s({1}, {1});
  std::string err = run_error("Exp", {&i});
  EXPECT_NE(err.find("test_Exp"), std::string::npos) << err;
  EXPECT_NE(err.find("int64"), std::string::npos) << err;
  EXPECT_NE(run_error("Relu", {&kX, &kX}).find("at most 1"), std::string::npos);
  Tensor two = floats({2}, {0, 1});
  EXPECT_NE(run_error("Clip", {&kX, &two}, {}, 13).find("scalar"), std::string::npos);
}

}  // namespace
}  // namespace kiln::ops::testing
