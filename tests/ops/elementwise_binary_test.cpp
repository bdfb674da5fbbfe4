// Tests of the broadcasting element-wise ops: numpy and legacy (opset < 7) broadcasting, integer
// semantics of Div/Mod/Pow, comparisons, Where, variadic ops, shape-rule errors.
#include <limits>

#include "ops/family_test_util.h"

namespace kiln::ops::testing {
namespace {

TEST(ElementwiseBinary, NumpyBroadcastAdd) {
  // [2,3] + [3] and [2,1] + [3]: hand-computed.
  Tensor a = floats({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor row = floats({3}, {10, 20, 30});
  expect_near(run("Add", {&a, &row})[0], {11, 22, 33, 14, 25, 36}, {2, 3});
  Tensor col = floats({2, 1}, {100, 200});
  expect_near(run("Sub", {&col, &row})[0], {90, 80, 70, 190, 180, 170}, {2, 3});
  Tensor scalar = floats({}, {2});
  expect_near(run("Mul", {&scalar, &a})[0], {2, 4, 6, 8, 10, 12}, {2, 3});
}

TEST(ElementwiseBinary, LegacyBroadcastAlignsAtAxis) {
  // Opset 6: B of shape [2] added along axis 0 of A [2,3] (hand-computed).
  Tensor a = floats({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor b = floats({2}, {10, 20});
  expect_near(run("Add", {&a, &b}, {{"broadcast", attr_i(1)}, {"axis", attr_i(0)}}, 6)[0], {11, 12, 13, 24, 25, 26},
              {2, 3});
  // Without `axis`, suffix matching: B [3].
  Tensor c = floats({3}, {1, 1, 1});
  expect_near(run("Mul", {&a, &c}, {{"broadcast", attr_i(1)}}, 6)[0], {1, 2, 3, 4, 5, 6}, {2, 3});
  // broadcast=0 requires equal shapes.
  EXPECT_NE(run_error("Add", {&a, &c}, {}, 6).find("broadcast is 0"), std::string::npos);
}

TEST(ElementwiseBinary, IntegerDivTruncatesAndModFollowsSign) {
  // C truncation: -7/2 = -3; Python mod: -7 % 2 = 1, 7 % -2 = -1; fmod: -7 fmod 2 = -1.
  Tensor a = int64s({3}, {-7, 7, 7});
  Tensor b = int64s({3}, {2, -2, 2});
  EXPECT_EQ(values<int64_t>(run("Div", {&a, &b})[0]), (std::vector<int64_t>{-3, -3, 3}));
  EXPECT_EQ(values<int64_t>(run("Mod", {&a, &b})[0]), (std::vector<int64_t>{1, -1, 1}));
  EXPECT_EQ(values<int64_t>(run("Mod", {&a, &b}, {{"fmod", attr_i(1)}})[0]), (std::vector<int64_t>{-1, 1, 1}));
  Tensor fa = floats({2}, {-7.5f, 7.5f}), fb = floats({2}, {2, -2});
  expect_near(run("Mod", {&fa, &fb}, {{"fmod", attr_i(1)}})[0], {-1.5, 1.5}, {2});
  Tensor zero = int64s({1}, {0});
  EXPECT_NE(run_error("Div", {&a, &zero}).find("division by zero"), std::string::npos);
}

TEST(ElementwiseBinary, Int64StaysExact) {
  const int64_t big = (int64_t{1} << 62) + 1;
  Tensor a = int64s({1}, {big}), b = int64s({1}, {2});
  EXPECT_EQ(values<int64_t>(run("Add", {&a, &b})[0])[0], big + 2);
  EXPECT_EQ(values<int64_t>(run("Sub", {&a, &b})[0])[0], big - 2);
}

TEST(ElementwiseBinary, PowMixedTypes) {
  // ONNX test_pow_types_int32_float32: [1,2,3] ** [4,5,6] = [1,32,729] as int32.
  Tensor x = typed<int32_t>(DType::kInt32, {3}, {1, 2, 3});
  Tensor y = floats({3}, {4, 5, 6});
  auto z = run("Pow", {&x, &y}, {}, 15)[0];
  EXPECT_EQ(z.dtype(), DType::kInt32);
  EXPECT_EQ(values<int32_t>(z), (std::vector<int32_t>{1, 32, 729}));
  Tensor fx = floats({2}, {4, 2}), e = int64s({1}, {3});
  expect_near(run("Pow", {&fx, &e}, {}, 15)[0], {64, 8}, {2});
  EXPECT_NE(run_error("Pow", {&fx, &e}, {}, 7).find("same element type"), std::string::npos);
}

TEST(ElementwiseBinary, ComparisonsAndLogic) {
  Tensor a = floats({3}, {1, 2, 3}), b = floats({1}, {2});
  EXPECT_EQ(values<bool>(run("Less", {&a, &b})[0]), (std::vector<bool>{true, false, false}));
  EXPECT_EQ(values<bool>(run("GreaterOrEqual", {&a, &b})[0]), (std::vector<bool>{false, true, true}));
  EXPECT_EQ(values<bool>(run("Equal", {&a, &b})[0]), (std::vector<bool>{false, true, false}));
  Tensor p = bools({2, 2}, {true, true, false, false}), q = bools({2}, {true, false});
  EXPECT_EQ(values<bool>(run("Xor", {&p, &q})[0]), (std::vector<bool>{false, true, true, false}));
  Tensor u = typed<uint8_t>(DType::kUInt8, {3}, {1, 16, 255}), s = typed<uint8_t>(DType::kUInt8, {3}, {3, 2, 9});
  EXPECT_EQ(values<uint8_t>(run("BitShift", {&u, &s}, {{"direction", ir::Attribute::of_string("LEFT")}}, 11)[0]),
            (std::vector<uint8_t>{8, 64, 0}));
  EXPECT_NE(run_error("BitShift", {&u, &s}, {{"direction", ir::Attribute::of_string("UP")}}, 11).find("direction"),
            std::string::npos);
}

TEST(ElementwiseBinary, PReluChannelSlope) {
  // Opset 6 slope [2] applies per channel of X [1,2,2]; opset 9 uses numpy broadcasting ([2,1]).
  Tensor x = floats({1, 2, 2}, {-1, 2, -3, 4});
  Tensor slope = floats({2}, {0.5, 0.1f});
  expect_near(run("PRelu", {&x, &slope}, {}, 6)[0], {-0.5, 2, -0.3, 4}, {1, 2, 2});
  Tensor slope2 = floats({2, 1}, {0.5, 0.1f});
  expect_near(run("PRelu", {&x, &slope2}, {}, 9)[0], {-0.5, 2, -0.3, 4}, {1, 2, 2});
}

TEST(ElementwiseBinary, WhereBroadcastsThreeWays) {
  Tensor c = bools({2, 1}, {true, false});
  Tensor x = floats({2}, {1, 2}), y = floats({}, {9});
  expect_near(run("Where", {&c, &x, &y})[0], {1, 2, 9, 9}, {2, 2});
  Tensor sx = typed<std::string>(DType::kString, {1}, {"yes"}), sy = typed<std::string>(DType::kString, {1}, {"no"});
  EXPECT_EQ(values<std::string>(run("Where", {&c, &sx, &sy})[0]), (std::vector<std::string>{"yes", "no"}));
}

TEST(ElementwiseBinary, VariadicOps) {
  // Hand-computed over [3], [1], [2,1].
  Tensor a = floats({3}, {1, 5, 3}), b = floats({1}, {2}), c = floats({2, 1}, {0, 4});
  expect_near(run("Max", {&a, &b, &c})[0], {2, 5, 3, 4, 5, 4}, {2, 3});
  expect_near(run("Min", {&a, &b})[0], {1, 2, 2}, {3});
  expect_near(run("Sum", {&a, &b, &c})[0], {3, 7, 5, 7, 11, 9}, {2, 3});
  expect_near(run("Mean", {&a, &b})[0], {1.5, 3.5, 2.5}, {3});
  expect_near(run("Sum", {&a})[0], {1, 5, 3}, {3});
}

TEST(ElementwiseBinary, ShapeRules) {
  auto r = infer("Add", {ir::TensorType{DType::kFloat, sym({"N", 1, 4})}, ir::TensorType{DType::kFloat, sym({3, 1})}});
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r.value()[0].shape->to_string(), "[N,3,4]");
  auto bad = infer("Mul", {ir::TensorType{DType::kFloat, sym({"N", 3})}, ir::TensorType{DType::kFloat, sym({4})}});
  ASSERT_FALSE(bad.is_ok());
  EXPECT_NE(bad.status().message().find("node_Mul"), std::string::npos);
  EXPECT_NE(bad.status().message().find("cannot be broadcast"), std::string::npos);
  auto mixed = infer("Add", {ir::TensorType{DType::kFloat, sym({2})}, ir::TensorType{DType::kInt64, sym({2})}});
  ASSERT_FALSE(mixed.is_ok());
  auto cmp = infer("Less", {ir::TensorType{DType::kInt32, sym({"B"})}, ir::TensorType{DType::kInt32, sym({1})}});
  ASSERT_TRUE(cmp.is_ok());
  EXPECT_EQ(cmp.value()[0].dtype, DType::kBool);
  Tensor a = floats({2}, {1, 2});
  EXPECT_NE(run_error("Add", {&a}).find("at least 2"), std::string::npos);
}

}  // namespace
}  // namespace kiln::ops::testing
