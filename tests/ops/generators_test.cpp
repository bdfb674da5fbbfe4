// Tests of the generator ops: Constant's value attributes, ConstantOfShape, Range and EyeLike
// (hand-computed; Range matches numpy.arange).
#include <gtest/gtest.h>

#include "ops/rule_harness.h"

namespace kiln::ops {
namespace {

using namespace testing;

TEST(Generators, ConstantFromEachAttributeKind) {
  Result<RuleResult> r = run_rule("Constant", {}, {{"value_ints", ints({4, 5})}});
  ASSERT_TRUE(r.is_ok());
  ASSERT_TRUE(r->values[0].has_value());
  EXPECT_EQ(elements<int64_t>(*r->values[0]), (std::vector<int64_t>{4, 5}));
  EXPECT_EQ(elements<float>(eval("Constant", {}, {{"value_float", ir::Attribute::of_float(2.5f)}})[0]), (std::vector<float>{2.5f}));
  EXPECT_EQ(elements<std::string>(eval("Constant", {}, {{"value_string", str("hi")}})[0]), (std::vector<std::string>{"hi"}));
  Tensor t = f32({2, 1}, {3, 4});
  Tensor y = eval("Constant", {}, {{"value", ir::Attribute::of_tensor(t)}})[0];
  EXPECT_EQ(y.shape(), (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(elements<float>(y), (std::vector<float>{3, 4}));
  EXPECT_NE(rule_error("Constant", {}, {{"value_int", int_attr(1)}, {"value_float", ir::Attribute::of_float(1)}}).find("exactly one"),
            std::string::npos);
}

TEST(Generators, ConstantOfShape) {
  Tensor shape = i64({2, 3});
  Tensor y = eval("ConstantOfShape", {&shape})[0];
  EXPECT_EQ(y.dtype(), DType::kFloat);
  EXPECT_EQ(elements<float>(y), std::vector<float>(6, 0.0f));
  Tensor one = Tensor::from_vector<int32_t>(DType::kInt32, {1}, {7});
  Tensor z = eval("ConstantOfShape", {&shape}, {{"value", ir::Attribute::of_tensor(one)}})[0];
  EXPECT_EQ(z.dtype(), DType::kInt32);
  EXPECT_EQ(elements<int32_t>(z), std::vector<int32_t>(6, 7));
  EXPECT_EQ(rule_type("ConstantOfShape", {RuleInput{ir::make_type(DType::kInt64, {3})}}).to_string(), "float[?,?,?]");
  Tensor negative = i64({-1});
  EXPECT_NE(rule_error("ConstantOfShape", {known(negative)}).find("negative"), std::string::npos);
}

TEST(Generators, RangeIntAndFloat) {
  // np.arange(10, 4, -3) == [10, 7]; np.arange(1.0, 2.0, 0.25) == [1, 1.25, 1.5, 1.75]
  Tensor s = Tensor::from_vector<int32_t>(DType::kInt32, {}, {10});
  Tensor l = Tensor::from_vector<int32_t>(DType::kInt32, {}, {4});
  Tensor d = Tensor::from_vector<int32_t>(DType::kInt32, {}, {-3});
  EXPECT_EQ(elements<int32_t>(eval("Range", {&s, &l, &d})[0]), (std::vector<int32_t>{10, 7}));
  Tensor fs = f32({}, {1}), fl = f32({}, {2}), fd = f32({}, {0.25f});
  EXPECT_EQ(elements<float>(eval("Range", {&fs, &fl, &fd})[0]), (std::vector<float>{1, 1.25f, 1.5f, 1.75f}));
  Tensor zero = f32({}, {0});
  EXPECT_FALSE(evaluate_op("Range", {&fs, &fl, &zero}).is_ok());
  EXPECT_EQ(rule_type("Range", {RuleInput{ir::make_type(DType::kInt64, {})}, RuleInput{ir::make_type(DType::kInt64, {})},
                                RuleInput{ir::make_type(DType::kInt64, {})}})
                .to_string(),
            "int64[?]");
}

TEST(Generators, EyeLikeWithOffsetAndDtype) {
  Tensor x = Tensor::allocate(DType::kInt32, {2, 3});
  Tensor y = eval("EyeLike", {&x}, {{"k", int_attr(1)}, {"dtype", int_attr(static_cast<int64_t>(DType::kDouble))}})[0];
  EXPECT_EQ(y.dtype(), DType::kDouble);
  EXPECT_EQ(elements<double>(y), (std::vector<double>{0, 1, 0, 0, 0, 1}));
}

}  // namespace
}  // namespace kiln::ops
