// Tests of the shape ops: Shape/Size values, Reshape/Expand/Squeeze/Unsqueeze/Flatten rules with
// symbolic dims and value-driven shapes, and their kernels. Expected values are hand-computed.
#include <gtest/gtest.h>

#include "ops/rule_harness.h"

namespace kiln::ops {
namespace {

using namespace testing;
const ir::Dim kBatch = ir::Dim::symbol("batch");
const ir::Dim kSeq = ir::Dim::symbol("seq");

TEST(ShapeOps, ShapeGivesItsValueWhenStatic) {
  Result<RuleResult> r = run_rule("Shape", {RuleInput{ir::make_type(DType::kFloat, {2, 3, 4})}});
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r->types[0].to_string(), "int64[3]");
  ASSERT_TRUE(r->values[0].has_value());
  EXPECT_EQ(elements<int64_t>(*r->values[0]), (std::vector<int64_t>{2, 3, 4}));
}

TEST(ShapeOps, ShapeOfSymbolicInputHasRankButNoValue) {
  Result<RuleResult> r = run_rule("Shape", {RuleInput{typed(DType::kFloat, {kBatch, 3})}});
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(r->types[0].to_string(), "int64[2]");
  EXPECT_FALSE(r->values[0].has_value());
}

TEST(ShapeOps, ShapeStartEndSelectsStaticPartOfSymbolicShape) {
  // start=1, end=-1 of [batch, 7, 9, seq] selects [7, 9], all static.
  Result<RuleResult> r = run_rule("Shape", {RuleInput{typed(DType::kFloat, {kBatch, 7, 9, kSeq})}},
                                  {{"start", int_attr(1)}, {"end", int_attr(-1)}}, 15);
  ASSERT_TRUE(r.is_ok());
  ASSERT_TRUE(r->values[0].has_value());
  EXPECT_EQ(elements<int64_t>(*r->values[0]), (std::vector<int64_t>{7, 9}));
  // Kernel with clamped start: start=-10 clamps to 0.
  Tensor x = iota_f32({2, 3});
  EXPECT_EQ(elements<int64_t>(eval("Shape", {&x}, {{"start", int_attr(-10)}}, 15)[0]), (std::vector<int64_t>{2, 3}));
}

TEST(ShapeOps, SizeValueAndKernel) {
  Result<RuleResult> r = run_rule("Size", {RuleInput{ir::make_type(DType::kFloat, {2, 3, 4})}});
  ASSERT_TRUE(r.is_ok() && r->values[0].has_value());
  EXPECT_EQ(r->values[0]->data<int64_t>()[0], 24);
  Tensor x = iota_f32({5, 2});
  EXPECT_EQ(elements<int64_t>(eval("Size", {&x})[0]), (std::vector<int64_t>{10}));
}

TEST(ShapeOps, ReshapeZeroCopiesAndMinusOneInfers) {
  Tensor x = iota_f32({2, 3, 4});
  Tensor shape = i64({0, -1});
  Tensor y = eval("Reshape", {&x, &shape})[0];
  EXPECT_EQ(y.shape(), (std::vector<int64_t>{2, 12}));
  EXPECT_EQ(elements<float>(y), elements<float>(x));
}

TEST(ShapeOps, ReshapeAllowZeroKeepsZeroDims) {
  Tensor x = Tensor::allocate(DType::kFloat, {0, 3});
  Tensor shape = i64({3, 0});
  EXPECT_EQ(eval("Reshape", {&x, &shape}, {{"allowzero", int_attr(1)}}, 14)[0].shape(), (std::vector<int64_t>{3, 0}));
}

TEST(ShapeOps, ReshapeKeepsSymbolsThroughZeroAndMinusOne) {
  // [batch, seq, 768] -> [0, 0, 12, 64]: the symbols are copied.
  Tensor target = i64({0, 0, 12, 64});
  EXPECT_EQ(rule_type("Reshape", {RuleInput{typed(DType::kFloat, {kBatch, kSeq, 768})}, known(target)}).to_string(),
            "float[batch,seq,12,64]");
  // [batch, 12, 64] -> [-1, 768]: the -1 is batch (12 * 64 == 768 cancels).
  Tensor flat = i64({-1, 768});
  EXPECT_EQ(rule_type("Reshape", {RuleInput{typed(DType::kFloat, {kBatch, 12, 64})}, known(flat)}).to_string(),
            "float[batch,768]");
  // [batch, seq, 768] -> [0, -1, 64]: seq * 12 is not one symbol, so the dim is unknown.
  Tensor heads = i64({0, -1, 64});
  EXPECT_EQ(rule_type("Reshape", {RuleInput{typed(DType::kFloat, {kBatch, kSeq, 768})}, known(heads)}).to_string(),
            "float[batch,?,64]");
}

TEST(ShapeOps, ReshapeWithUnknownTargetHasTheTargetsLengthAsRank) {
  EXPECT_EQ(rule_type("Reshape", {RuleInput{typed(DType::kFloat, {kBatch, 8})}, RuleInput{ir::make_type(DType::kInt64, {3})}})
                .to_string(),
            "float[?,?,?]");
}

TEST(ShapeOps, ReshapeErrorsNameTheNode) {
  Tensor two = i64({-1, -1});
  EXPECT_NE(rule_error("Reshape", {RuleInput{ir::make_type(DType::kFloat, {4})}, known(two)}).find("node_under_test"),
            std::string::npos);
  Tensor bad = i64({5});
  EXPECT_NE(rule_error("Reshape", {RuleInput{ir::make_type(DType::kFloat, {2, 3})}, known(bad)}).find("cannot reshape"),
            std::string::npos);
  Tensor floats = f32({1}, {6});
  EXPECT_NE(rule_error("Reshape", {RuleInput{ir::make_type(DType::kFloat, {6})}, known(floats)}).find("int64"),
            std::string::npos);
}

TEST(ShapeOps, ReshapeOpset1UsesTheShapeAttribute) {
  Tensor x = iota_f32({6});
  EXPECT_EQ(eval("Reshape", {&x}, {{"shape", ints({3, 2})}}, 1)[0].shape(), (std::vector<int64_t>{3, 2}));
}

TEST(ShapeOps, FlattenRulesAndKernel) {
  EXPECT_EQ(rule_type("Flatten", {RuleInput{typed(DType::kFloat, {kBatch, 3, 4})}}).to_string(), "float[batch,12]");
  EXPECT_EQ(rule_type("Flatten", {RuleInput{typed(DType::kFloat, {kBatch, 3, 4})}}, {{"axis", int_attr(-1)}}).to_string(),
            "float[?,4]");
  EXPECT_EQ(rule_type("Flatten", {RuleInput{typed(DType::kFloat, {2, 3, 4})}}, {{"axis", int_attr(0)}}).to_string(),
            "float[1,24]");
  EXPECT_NE(rule_error("Flatten", {RuleInput{ir::make_type(DType::kFloat, {2, 3})}}, {{"axis", int_attr(3)}}).find("axis"),
            std::string::npos);
}

TEST(ShapeOps, SqueezeAttributeAndInputForms) {
  Tensor x = iota_f32({1, 3, 1});
  EXPECT_EQ(eval("Squeeze", {&x}, {{"axes", ints({0})}}, 11)[0].shape(), (std::vector<int64_t>{3, 1}));
  Tensor axes = i64({-1});
  EXPECT_EQ(eval("Squeeze", {&x, &axes}, {}, 13)[0].shape(), (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(eval("Squeeze", {&x}, {}, 13)[0].shape(), (std::vector<int64_t>{3}));
  EXPECT_EQ(rule_type("Squeeze", {RuleInput{typed(DType::kFloat, {kBatch, 1, kSeq})}, known(i64({1}))}).to_string(),
            "float[batch,seq]");
  Tensor one = i64({1});
  EXPECT_NE(rule_error("Squeeze", {RuleInput{ir::make_type(DType::kFloat, {2, 3})}, known(one)}).find("cannot squeeze"),
            std::string::npos);
}

TEST(ShapeOps, UnsqueezeInsertsAtOutputPositions) {
  Tensor axes = i64({0, 3});
  EXPECT_EQ(rule_type("Unsqueeze", {RuleInput{typed(DType::kInt64, {kBatch, kSeq})}, known(axes)}).to_string(),
            "int64[1,batch,seq,1]");
  Tensor x = iota_f32({2, 3});
  EXPECT_EQ(eval("Unsqueeze", {&x}, {{"axes", ints({-1})}}, 11)[0].shape(), (std::vector<int64_t>{2, 3, 1}));
  Tensor dup = i64({1, 1});
  EXPECT_NE(rule_error("Unsqueeze", {RuleInput{ir::make_type(DType::kFloat, {2})}, known(dup)}).find("repeated"),
            std::string::npos);
  // Scalar to 1-D: the shape-chain idiom.
  Tensor s = i64({}, {7});
  Tensor zero = i64({0});
  EXPECT_EQ(elements<int64_t>(eval("Unsqueeze", {&s, &zero})[0]), (std::vector<int64_t>{7}));
}

TEST(ShapeOps, ExpandBroadcastsBothWays) {
  // [3, 1] expanded by [2, 1, 4] -> [2, 3, 4]; numpy: np.broadcast_to(x, (2, 3, 4)).
  Tensor x = f32({3, 1}, {1, 2, 3});
  Tensor shape = i64({2, 1, 4});
  Tensor y = eval("Expand", {&x, &shape})[0];
  EXPECT_EQ(y.shape(), (std::vector<int64_t>{2, 3, 4}));
  std::vector<float> want;
  for (int b = 0; b < 2; ++b)
    for (float v : {1.0f, 2.0f, 3.0f}) want.insert(want.end(), 4, v);
  EXPECT_EQ(elements<float>(y), want);
  EXPECT_EQ(rule_type("Expand", {RuleInput{typed(DType::kFloat, {kBatch, 1, 64})}, RuleInput{ir::make_type(DType::kInt64, {3})}})
                .to_string(),
            "float[?,?,64]");
  Tensor bad = i64({2, 5});
  EXPECT_NE(rule_error("Expand", {RuleInput{ir::make_type(DType::kFloat, {3, 4})}, known(bad)}).find("broadcast"),
            std::string::npos);
}

TEST(ShapeOps, IdentityCopiesStrings) {
  Tensor s = Tensor::from_vector<std::string>(DType::kString, {2}, {"a", "bc"});
  EXPECT_EQ(elements<std::string>(eval("Identity", {&s})[0]), (std::vector<std::string>{"a", "bc"}));
}

}  // namespace
}  // namespace kiln::ops
