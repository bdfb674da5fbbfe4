// Tests of the Reduce* ops (axes attribute and input forms, keepdims, noop) and ArgMax/ArgMin.
#include <cmath>
#include <limits>

#include "ops/family_test_util.h"

namespace kiln::ops::testing {
namespace {

const Tensor kX = floats({2, 3}, {1, 2, 3, 4, 5, 7});

// Expected values hand-computed or from numpy (np.log(np.exp(x).sum(1)), np.sqrt((x**2).sum(0))).
TEST(Reduce, AttributeAxes) {
  expect_near(run("ReduceSum", {&kX}, {{"axes", attr_is({1})}}, 11)[0], {6, 16}, {2, 1});
  expect_near(run("ReduceMean", {&kX}, {{"axes", attr_is({0})}, {"keepdims", attr_i(0)}})[0], {2.5, 3.5, 5}, {3});
  expect_near(run("ReduceMax", {&kX}, {{"axes", attr_is({-1})}})[0], {3, 7}, {2, 1});
  expect_near(run("ReduceMin", {&kX})[0], {1}, {1, 1});
  expect_near(run("ReduceProd", {&kX}, {{"axes", attr_is({1})}, {"keepdims", attr_i(0)}})[0], {6, 140}, {2});
  expect_near(run("ReduceSumSquare", {&kX}, {{"axes", attr_is({1})}, {"keepdims", attr_i(0)}})[0], {14, 90}, {2});
  expect_near(run("ReduceL1", {&kX}, {{"keepdims", attr_i(0)}})[0], {22}, {});
  expect_near(run("ReduceL2", {&kX}, {{"axes", attr_is({0})}, {"keepdims", attr_i(0)}})[0],
              {4.12310563, 5.38516481, 7.61577311}, {3});
  expect_near(run("ReduceLogSum", {&kX}, {{"axes", attr_is({1})}, {"keepdims", attr_i(0)}})[0],
              {std::log(6.0), std::log(16.0)}, {2});
  expect_near(run("ReduceLogSumExp", {&kX}, {{"axes", attr_is({1})}, {"keepdims", attr_i(0)}})[0],
              {3.40760596, 7.16984602}, {2});
}

// log(sum(exp(x))) over rows of only -inf is -inf (log 0), with a +inf (once or twice) +inf, with
// a NaN NaN; -inf elements beside finite ones add nothing.
TEST(Reduce, LogSumExpOfInfinities) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const Tensor x = floats({5, 2}, {-inf, -inf, inf, 1, inf, inf, nan, 1, -inf, 2});
  const Tensor y = run("ReduceLogSumExp", {&x}, {{"axes", attr_is({1})}, {"keepdims", attr_i(0)}})[0];
  const float* v = y.data<float>();
  EXPECT_EQ(v[0], -inf);
  EXPECT_EQ(v[1], inf);
  EXPECT_EQ(v[2], inf);
  EXPECT_TRUE(std::isnan(v[3]));
  EXPECT_FLOAT_EQ(v[4], 2.0f);
}

// From opset 18 every reduction reads its axes from input 1; opsets past 21 are refused.
TEST(Reduce, AxesInputFromOpset18AndNewerOpsetsRefused) {
  Tensor axes = int64s({1}, {0});
  expect_near(run("ReduceMean", {&kX, &axes}, {}, 18)[0], {2.5, 3.5, 5}, {1, 3});
  expect_near(run("ReduceMax", {&kX, &axes}, {{"keepdims", attr_i(0)}}, 20)[0], {4, 5, 7}, {3});
  Tensor none = int64s({0}, {});
  expect_near(run("ReduceL1", {&kX, &none}, {{"noop_with_empty_axes", attr_i(1)}}, 18)[0], {1, 2, 3, 4, 5, 7}, {2, 3});
  EXPECT_NE(run_error("ReduceMean", {&kX, &axes}, {}, 22).find("newer than Kiln supports"), std::string::npos);
}

TEST(Reduce, AxesInputFromOpset13ForSum) {
  Tensor axes = int64s({1}, {0});
  expect_near(run("ReduceSum", {&kX, &axes}, {}, 13)[0], {5, 7, 10}, {1, 3});
  Tensor none = int64s({0}, {});
  expect_near(run("ReduceSum", {&kX, &none}, {{"keepdims", attr_i(0)}}, 13)[0], {22}, {});
  expect_near(run("ReduceSum", {&kX, &none}, {{"noop_with_empty_axes", attr_i(1)}}, 13)[0], {1, 2, 3, 4, 5, 7}, {2, 3});
}

TEST(Reduce, IntegersAreExact) {
  const int64_t big = (int64_t{1} << 60) + 1;
  Tensor x = int64s({3}, {big, 1, -3});
  EXPECT_EQ(values<int64_t>(run("ReduceSum", {&x}, {}, 11)[0])[0], big - 2);
  EXPECT_EQ(values<int64_t>(run("ReduceMax", {&x}, {}, 11)[0])[0], big);
  Tensor small = typed<int32_t>(DType::kInt32, {3}, {-7, 2, -4});
  EXPECT_EQ(values<int32_t>(run("ReduceL1", {&small}, {}, 11)[0])[0], 13);
  EXPECT_EQ(values<int32_t>(run("ReduceMean", {&small}, {}, 11)[0])[0], -3);  // -9 / 3
}

TEST(Reduce, ArgMaxArgMin) {
  Tensor x = floats({2, 3}, {1, 7, 7, 4, 0, 0});
  EXPECT_EQ(values<int64_t>(run("ArgMax", {&x}, {{"axis", attr_i(1)}})[0]), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(values<int64_t>(run("ArgMax", {&x}, {{"axis", attr_i(1)}, {"select_last_index", attr_i(1)}})[0]),
            (std::vector<int64_t>{2, 0}));
  auto mins = run("ArgMin", {&x}, {{"axis", attr_i(0)}, {"keepdims", attr_i(0)}})[0];
  EXPECT_EQ(mins.shape(), (std::vector<int64_t>{3}));
  EXPECT_EQ(values<int64_t>(mins), (std::vector<int64_t>{0, 1, 1}));
}

TEST(Reduce, ShapeRules) {
  auto r = infer("ReduceMean", {ir::TensorType{DType::kFloat, sym({"B", "S", 768})}}, {{"axes", attr_is({-1})}}, 13);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(r.value()[0].shape->to_string(), "[B,S,1]");
  // Axes input with unknown value: rank is kept with keepdims, dims unknown.
  auto unknown = infer("ReduceSum", {ir::TensorType{DType::kFloat, sym({"B", 4})}, ir::TensorType{DType::kInt64, sym({1})}}, {}, 13);
  ASSERT_TRUE(unknown.is_ok());
  EXPECT_EQ(unknown.value()[0].shape->rank(), 2u);
  auto bad = infer("ReduceMax", {ir::TensorType{DType::kFloat, sym({2, 3})}}, {{"axes", attr_is({2})}});
  ASSERT_FALSE(bad.is_ok());
  EXPECT_NE(bad.status().message().find("node_ReduceMax"), std::string::npos);
  EXPECT_FALSE(infer("ReduceSum", {ir::TensorType{DType::kFloat, sym({2, 3})}}, {{"axes", attr_is({1, -1})}}, 11).is_ok());
  EXPECT_FALSE(infer("ArgMax", {ir::TensorType{DType::kFloat, sym({2})}}, {{"axis", attr_i(1)}}).is_ok());
  auto arg = infer("ArgMin", {ir::TensorType{DType::kFloat, sym({"N", 5})}}, {{"axis", attr_i(1)}, {"keepdims", attr_i(0)}});
  ASSERT_TRUE(arg.is_ok());
  EXPECT_EQ(arg.value()[0].to_string(), "int64[N]");
}

}  // namespace
}  // namespace kiln::ops::testing
