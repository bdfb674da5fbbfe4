// Tests of Cast and CastLike: numeric pairs, bool, 16-bit floats, string text in both directions,
// the 8-bit floats (saturate) and the 4-bit integers.
#include <limits>

#include "kiln/ir/float8.h"
#include "ops/family_test_util.h"

namespace kiln::ops::testing {
namespace {

ir::Attribute to(DType d) { return attr_i(static_cast<int64_t>(d)); }

TEST(Cast, FloatToIntTruncatesAndSaturates) {
  Tensor x = floats({4}, {-1.7f, 2.9f, 1e20f, std::nanf("")});
  EXPECT_EQ(values<int32_t>(run("Cast", {&x}, {{"to", to(DType::kInt32)}})[0]),
            (std::vector<int32_t>{-1, 2, std::numeric_limits<int32_t>::max(), 0}));
  EXPECT_EQ(values<bool>(run("Cast", {&x}, {{"to", to(DType::kBool)}})[0]), (std::vector<bool>{true, true, true, true}));
}

TEST(Cast, IntegerToIntegerWrapsAndInt64IsExact) {
  Tensor x = int64s({2}, {300, (int64_t{1} << 60) + 1});
  EXPECT_EQ(values<uint8_t>(run("Cast", {&x}, {{"to", to(DType::kUInt8)}})[0])[0], 44);  // 300 mod 256
  EXPECT_EQ(values<uint64_t>(run("Cast", {&x}, {{"to", to(DType::kUInt64)}})[0])[1], (uint64_t{1} << 60) + 1);
}

TEST(Cast, SixteenBitFloats) {
  // ONNX test_cast_FLOAT_to_BFLOAT16 (1.12 data): 0.47892547 -> bits 16117 (truncated), 0.816468 -> 16209.
  Tensor x = floats({2}, {0.47892547f, 0.816468f});
  auto b = run("Cast", {&x}, {{"to", to(DType::kBFloat16)}})[0];
  EXPECT_EQ(b.data<BFloat16>()[0].bits, 16117);
  EXPECT_EQ(b.data<BFloat16>()[1].bits, 16209);
  // float16 rounds to nearest even: 0.1 -> 0x2e66 (numpy: np.float16(0.1).view(np.uint16) = 11878).
  Tensor tenth = floats({1}, {0.1f});
  EXPECT_EQ(run("Cast", {&tenth}, {{"to", to(DType::kFloat16)}})[0].data<Float16>()[0].bits, 11878);
}

TEST(Cast, FloatToStringIsShortestRoundTrip) {
  // numpy: str(np.float32(v)) for each value.
  Tensor x = floats({7}, {0.039187793f, 1.0f, 1e-5f, 1.5e20f, 123456789.0f, -2.5f, -std::numeric_limits<float>::infinity()});
  EXPECT_EQ(values<std::string>(run("Cast", {&x}, {{"to", to(DType::kString)}})[0]),
            (std::vector<std::string>{"0.039187793", "1.0", "1e-05", "1.5e+20", "123456790.0", "-2.5", "-inf"}));
  Tensor h = Tensor::allocate(DType::kFloat16, {1});
  h.data<Float16>()[0] = ir::to_float16(0.1f);
  EXPECT_EQ(values<std::string>(run("Cast", {&h}, {{"to", to(DType::kString)}})[0])[0], "0.1");  // str(np.float16(0.1))
}

TEST(Cast, StringToNumbers) {
  Tensor s = typed<std::string>(DType::kString, {4}, {"0.5", "-INF", "NaN", "1e3"});
  auto f = run("Cast", {&s}, {{"to", to(DType::kFloat)}})[0];
  expect_near(f, {0.5, -std::numeric_limits<double>::infinity(), std::nan(""), 1000}, {4});
  Tensor big = typed<std::string>(DType::kString, {1}, {"1152921504606846977"});  // 2^60 + 1, exact
  EXPECT_EQ(values<int64_t>(run("Cast", {&big}, {{"to", to(DType::kInt64)}})[0])[0], (int64_t{1} << 60) + 1);
  Tensor bad = typed<std::string>(DType::kString, {1}, {"abc"});
  EXPECT_NE(run_error("Cast", {&bad}, {{"to", to(DType::kFloat)}}).find("does not hold a number"), std::string::npos);
}

TEST(Cast, OpsetOneNamesTheType) {
  Tensor x = floats({1}, {2.5f});
  auto y = run("Cast", {&x}, {{"to", ir::Attribute::of_string("DOUBLE")}}, 1)[0];
  EXPECT_EQ(y.dtype(), DType::kDouble);
  EXPECT_NE(run_error("Cast", {&x}, {{"to", ir::Attribute::of_string("QUAD")}}, 1).find("QUAD"), std::string::npos);
}

TEST(Cast, CastLikeTakesTheSecondInputsType) {
  Tensor x = floats({2}, {1.5f, -2.5f});
  Tensor like = int64s({}, {0});
  auto y = run("CastLike", {&x, &like}, {}, 15)[0];
  EXPECT_EQ(y.dtype(), DType::kInt64);
  EXPECT_EQ(values<int64_t>(y), (std::vector<int64_t>{1, -2}));
}

TEST(Cast, Float8SaturatesUnlessTold) {
  Tensor x = floats({3}, {1.0625f, 1000.0f, -1000.0f});
  auto sat = run("Cast", {&x}, {{"to", to(DType::kFloat8E4M3FN)}}, 19)[0];
  ASSERT_EQ(sat.dtype(), DType::kFloat8E4M3FN);
  EXPECT_EQ(sat.data<Float8E4M3FN>()[0].bits, 0x38);  // 1.0: the tie goes to even
  EXPECT_EQ(sat.data<Float8E4M3FN>()[1].bits, 0x7E);  // 448
  EXPECT_EQ(sat.data<Float8E4M3FN>()[2].bits, 0xFE);
  auto wide = run("Cast", {&x}, {{"to", to(DType::kFloat8E5M2)}, {"saturate", attr_i(0)}}, 19)[0];
  auto back = run("Cast", {&wide}, {{"to", to(DType::kFloat)}}, 19)[0];
  EXPECT_EQ(values<float>(back), (std::vector<float>{1.0f, 1024.0f, -1024.0f}));
  auto nosat = run("Cast", {&x}, {{"to", to(DType::kFloat8E4M3FN)}, {"saturate", attr_i(0)}}, 19)[0];
  EXPECT_TRUE(std::isnan(ir::to_float(nosat.data<Float8E4M3FN>()[1])));
}

TEST(Cast, FourBitIntegersRoundAwayFromZeroThenWrap) {
  // ONNX Runtime 1.30: 0.5 -> 1, -0.5 -> -1, 2.5 -> 3, 8 -> -8 (low 4 bits), -9 -> 7.
  Tensor x = floats({5}, {0.5f, -0.5f, 2.5f, 8.0f, -9.0f});
  auto y = run("Cast", {&x}, {{"to", to(DType::kInt4)}}, 21)[0];
  ASSERT_EQ(y.dtype(), DType::kInt4);
  std::vector<int> got;
  for (int64_t i = 0; i < 5; ++i) got.push_back(y.data<Int4>()[i].value);
  EXPECT_EQ(got, (std::vector<int>{1, -1, 3, -8, 7}));
  Tensor n = int64s({3}, {-1, 16, 31});
  auto u = run("Cast", {&n}, {{"to", to(DType::kUInt4)}}, 21)[0];
  EXPECT_EQ(u.data<UInt4>()[0].value, 15);
  EXPECT_EQ(u.data<UInt4>()[1].value, 0);
  EXPECT_EQ(u.data<UInt4>()[2].value, 15);
  EXPECT_EQ(values<int64_t>(run("Cast", {&y}, {{"to", to(DType::kInt64)}}, 21)[0]), (std::vector<int64_t>{1, -1, 3, -8, 7}));
}

TEST(Cast, NarrowTypesNeedTheirOpsetAndMeetNoStrings) {
  Tensor x = floats({1}, {1.0f});
  EXPECT_NE(run_error("Cast", {&x}, {{"to", to(DType::kFloat8E4M3FN)}}, 17).find("float8e4m3fn needs opset 19"), std::string::npos);
  EXPECT_NE(run_error("Cast", {&x}, {{"to", to(DType::kInt4)}}, 19).find("int4 needs opset 21"), std::string::npos);
  auto f8 = run("Cast", {&x}, {{"to", to(DType::kFloat8E5M2)}}, 19)[0];
  EXPECT_NE(run_error("Cast", {&f8}, {{"to", to(DType::kString)}}, 19).find("cannot cast float8e5m2 to string"), std::string::npos);
}

TEST(Cast, ShapeRule) {
  auto r = infer("Cast", {ir::TensorType{DType::kFloat, sym({"N", 2})}}, {{"to", to(DType::kInt8)}});
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(r.value()[0].to_string(), "int8[N,2]");
  auto missing = infer("Cast", {ir::TensorType{DType::kFloat, sym({2})}});
  ASSERT_FALSE(missing.is_ok());
  EXPECT_NE(missing.status().message().find("'to'"), std::string::npos);
  EXPECT_FALSE(infer("Cast", {ir::TensorType{DType::kFloat, sym({2})}}, {{"to", attr_i(99)}}).is_ok());
}

}  // namespace
}  // namespace kiln::ops::testing
