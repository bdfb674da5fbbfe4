// Tests of LayerNormalization, BatchNormalization (old and new versions, training form),
// InstanceNormalization, LpNormalization and MeanVarianceNormalization.
#include "ops/family_test_util.h"

namespace kiln::ops::testing {
namespace {

// Expected values computed with numpy float64 from the defining formulas (x.mean, x.var, ...).
TEST(Normalization, LayerNormWithStatsOutputs) {
  Tensor x = floats({2, 4}, {1, 2, 3, 4, 2, 4, 6, 10});
  Tensor scale = floats({4}, {1, 2, 1, 1}), bias = floats({4}, {0, 0, 0, 1});
  auto out = run("LayerNormalization", {&x, &scale, &bias}, {}, 17, 3);
  ASSERT_EQ(out.size(), 3u);
  expect_near(out[0], {-1.34163542, -0.89442361, 0.44721181, 2.34163542, -1.18321528, -1.01418453, 0.16903075, 2.52127679},
              {2, 4});
  expect_near(out[1], {2.5, 5.5}, {2, 1});
  expect_near(out[2], {0.89442361, 0.33806151}, {2, 1});
  EXPECT_EQ(out[1].dtype(), DType::kFloat);
}

TEST(Normalization, LayerNormShapeRule) {
  auto r = infer("LayerNormalization", {ir::TensorType{DType::kFloat, sym({"B", "S", 768})},
                                        ir::TensorType{DType::kFloat, sym({768})}}, {}, 17, 3);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r.value()[0].shape->to_string(), "[B,S,768]");
  EXPECT_EQ(r.value()[1].shape->to_string(), "[B,S,1]");
  auto bad = infer("LayerNormalization", {ir::TensorType{DType::kFloat, sym({2, 4})}, ir::TensorType{DType::kFloat, sym({3})}});
  ASSERT_FALSE(bad.is_ok());
  EXPECT_NE(bad.status().message().find("node_LayerNormalization"), std::string::npos);
  EXPECT_FALSE(infer("LayerNormalization", {ir::TensorType{DType::kFloat, sym({2, 4})}, ir::TensorType{DType::kFloat, sym({4})}},
                     {{"axis", attr_i(2)}}).is_ok());
}

const Tensor kX = floats({2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8});  // N=2, C=2, L=2

TEST(Normalization, BatchNormInference) {
  Tensor scale = floats({2}, {1, 2}), bias = floats({2}, {0, 1}), mean = floats({2}, {1, 2}), var = floats({2}, {4, 1});
  Attrs eps0{{"epsilon", attr_f(0)}};
  const std::vector<double> want{0, 0.5, 3, 5, 2, 2.5, 11, 13};
  expect_near(run("BatchNormalization", {&kX, &scale, &bias, &mean, &var}, eps0, 15)[0], want, {2, 2, 2});
  Attrs old = eps0;
  old["is_test"] = attr_i(1);
  expect_near(run("BatchNormalization", {&kX, &scale, &bias, &mean, &var}, old, 6)[0], want, {2, 2, 2});
  Tensor three = floats({3}, {1, 1, 1});
  EXPECT_NE(run_error("BatchNormalization", {&kX, &three, &bias, &mean, &var}, {}, 15).find("expected 2 elements"),
            std::string::npos);
}

TEST(Normalization, BatchNormTrainingMode) {
  Tensor scale = floats({2}, {1, 1}), bias = floats({2}, {0, 0}), mean = floats({2}, {0, 0}), var = floats({2}, {1, 1});
  auto out = run("BatchNormalization", {&kX, &scale, &bias, &mean, &var},
                 {{"epsilon", attr_f(0)}, {"training_mode", attr_i(1)}}, 15, 3);
  ASSERT_EQ(out.size(), 3u);
  expect_near(out[0], {-1.21267813, -0.72760688, -1.21267813, -0.72760688, 0.72760688, 1.21267813, 0.72760688, 1.21267813},
              {2, 2, 2});
  expect_near(out[1], {0.35, 0.55}, {2});  // 0 * 0.9 + batch_mean * 0.1
  expect_near(out[2], {1.325, 1.325}, {2});
  EXPECT_NE(run_error("BatchNormalization", {&kX, &scale, &bias, &mean, &var}, {}, 15, 3).find("training_mode"),
            std::string::npos);
}

TEST(Normalization, InstanceLpAndMeanVariance) {
  Tensor scale = floats({2}, {1, 1}), bias = floats({2}, {0, 0});
  expect_near(run("InstanceNormalization", {&kX, &scale, &bias}, {{"epsilon", attr_f(0)}})[0], {-1, 1, -1, 1, -1, 1, -1, 1},
              {2, 2, 2});
  Tensor x = floats({2, 4}, {1, 2, 3, 4, 2, 4, 6, 10});
  expect_near(run("LpNormalization", {&x})[0],
              {0.18257419, 0.36514837, 0.54772256, 0.73029674, 0.16012815, 0.32025631, 0.48038446, 0.80064077}, {2, 4});
  expect_near(run("LpNormalization", {&x}, {{"p", attr_i(1)}, {"axis", attr_i(0)}})[0],
              {1 / 3.0, 2 / 6.0, 3 / 9.0, 4 / 14.0, 2 / 3.0, 4 / 6.0, 6 / 9.0, 10 / 14.0}, {2, 4});
  EXPECT_NE(run_error("LpNormalization", {&x}, {{"p", attr_i(3)}}).find("p must be"), std::string::npos);
  Tensor y = floats({2, 2, 2, 1}, {1, 2, 3, 4, 5, 6, 7, 8});
  expect_near(run("MeanVarianceNormalization", {&y})[0],
              {-1.21267812, -0.72760687, -1.21267812, -0.72760687, 0.72760687, 1.21267812, 0.72760687, 1.21267812},
              {2, 2, 2, 1});
}

}  // namespace
}  // namespace kiln::ops::testing
