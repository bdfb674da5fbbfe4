// Tests of RNN, GRU and LSTM on one-unit layers whose outputs can be worked out by hand, in both
// layouts, reversed, with sequence lengths and bad attributes.
#include <gtest/gtest.h>

#include <cmath>

#include "kiln/ops/evaluate.h"

namespace kiln::ops {
namespace {

using A = ir::Attribute;
Tensor floats(std::vector<int64_t> shape, std::vector<float> v) { return Tensor::from_vector<float>(DType::kFloat, shape, v); }

TEST(Recurrent, RnnIsTanhOfTheRunningSum) {
  // hidden 1, W = 1, R = 1: h_t = tanh(x_t + h_{t-1}).
  const Tensor x = floats({2, 1, 1}, {0.5f, -0.25f}), w = floats({1, 1, 1}, {1}), r = floats({1, 1, 1}, {1});
  auto out = evaluate_op("RNN", {&x, &w, &r}, {{"hidden_size", A::of_int(1)}}, 14, 2);
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  const double h1 = std::tanh(0.5), h2 = std::tanh(-0.25 + h1);
  EXPECT_NEAR(out.value()[0].data<float>()[0], h1, 1e-6);
  EXPECT_NEAR(out.value()[1].data<float>()[0], h2, 1e-6);
  auto reversed = evaluate_op("RNN", {&x, &w, &r}, {{"hidden_size", A::of_int(1)}, {"direction", A::of_string("reverse")}}, 14, 2);
  ASSERT_TRUE(reversed.is_ok());
  EXPECT_NEAR(reversed.value()[1].data<float>()[0], std::tanh(0.5 + std::tanh(-0.25)), 1e-6);
}

TEST(Recurrent, LstmAndGruSingleStep) {
  // One step from zero state with W = 1 for every gate and R = 0: LSTM c = s(x) tanh(x),
  // h = s(x) tanh(c); GRU h = (1 - s(x)) tanh(x).
  const Tensor x = floats({1, 1, 1}, {0.3f}), r4 = floats({1, 4, 1}, {0, 0, 0, 0}), w4 = floats({1, 4, 1}, {1, 1, 1, 1});
  auto lstm = evaluate_op("LSTM", {&x, &w4, &r4}, {{"hidden_size", A::of_int(1)}}, 14, 3);
  ASSERT_TRUE(lstm.is_ok()) << lstm.status().to_string();
  const double s = 1 / (1 + std::exp(-0.3)), c = s * std::tanh(0.3);
  EXPECT_NEAR(lstm.value()[2].data<float>()[0], c, 1e-6);
  EXPECT_NEAR(lstm.value()[1].data<float>()[0], s * std::tanh(c), 1e-6);
  const Tensor w3 = floats({1, 3, 1}, {1, 1, 1}), r3 = floats({1, 3, 1}, {0, 0, 0});
  auto gru = evaluate_op("GRU", {&x, &w3, &r3}, {{"hidden_size", A::of_int(1)}}, 14, 2);
  ASSERT_TRUE(gru.is_ok()) << gru.status().to_string();
  EXPECT_NEAR(gru.value()[1].data<float>()[0], (1 - s) * std::tanh(0.3), 1e-6);
}

TEST(Recurrent, BadAttributesAreNamed) {
  const Tensor x = floats({1, 1, 1}, {0}), w = floats({1, 1, 1}, {1}), r = floats({1, 1, 1}, {1});
  auto bad = evaluate_op("RNN", {&x, &w, &r}, {{"hidden_size", A::of_int(1)}, {"direction", A::of_string("sideways")}}, 14, 2);
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidModel);
  EXPECT_NE(bad.status().message().find("RNN"), std::string::npos);
}

}  // namespace
}  // namespace kiln::ops
