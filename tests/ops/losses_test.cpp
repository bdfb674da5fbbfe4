// Tests of NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss on values worked out by hand.
#include <gtest/gtest.h>

#include <cmath>

#include "kiln/ops/evaluate.h"

namespace kiln::ops {
namespace {

using A = ir::Attribute;
Tensor floats(std::vector<int64_t> shape, std::vector<float> v) { return Tensor::from_vector<float>(DType::kFloat, shape, v); }
Tensor labels(std::vector<int64_t> v) { return Tensor::from_vector<int64_t>(DType::kInt64, {static_cast<int64_t>(v.size())}, v); }

float scalar(const Result<std::vector<Tensor>>& r) {
  EXPECT_TRUE(r.is_ok()) << r.status().to_string();
  return r.is_ok() ? r.value()[0].data<float>()[0] : NAN;
}

TEST(Losses, NegativeLogLikelihoodReductionsWeightsAndIgnoreIndex) {
  const Tensor logp = floats({2, 2}, {-1, -2, -3, -4});
  const Tensor target = labels({1, 0});  // picks -2 and -3
  const Tensor weight = floats({2}, {1, 2});
  EXPECT_FLOAT_EQ(scalar(evaluate_op("NegativeLogLikelihoodLoss", {&logp, &target}, {}, 13)), 2.5f);
  EXPECT_FLOAT_EQ(scalar(evaluate_op("NegativeLogLikelihoodLoss", {&logp, &target}, {{"reduction", A::of_string("sum")}}, 13)), 5.0f);
  // Weighted mean: (2*2 + 3*1) / (2 + 1).
  EXPECT_FLOAT_EQ(scalar(evaluate_op("NegativeLogLikelihoodLoss", {&logp, &target, &weight}, {}, 13)), 7.0f / 3.0f);
  // Ignoring class 0 leaves the first sample only.
  EXPECT_FLOAT_EQ(scalar(evaluate_op("NegativeLogLikelihoodLoss", {&logp, &target}, {{"ignore_index", A::of_int(0)}}, 13)), 2.0f);
  auto none = evaluate_op("NegativeLogLikelihoodLoss", {&logp, &target}, {{"reduction", A::of_string("none")}}, 13);
  ASSERT_TRUE(none.is_ok());
  EXPECT_EQ(none.value()[0].shape(), std::vector<int64_t>{2});
  EXPECT_FLOAT_EQ(none.value()[0].data<float>()[1], 3.0f);
}

TEST(Losses, SoftmaxCrossEntropyOfEqualScoresIsLogC) {
  const Tensor scores = floats({1, 4}, {0.5f, 0.5f, 0.5f, 0.5f});
  const Tensor target = labels({2});
  auto r = evaluate_op("SoftmaxCrossEntropyLoss", {&scores, &target}, {}, 13, 2);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_NEAR(r.value()[0].data<float>()[0], std::log(4.0f), 1e-6);
  EXPECT_NEAR(r.value()[1].data<float>()[3], -std::log(4.0f), 1e-6);  // log_prob
}

TEST(Losses, BadTargetAndReductionAreNamed) {
  const Tensor logp = floats({1, 2}, {-1, -2});
  const Tensor far = labels({5});
  auto out_of_range = evaluate_op("NegativeLogLikelihoodLoss", {&logp, &far}, {}, 13);
  ASSERT_FALSE(out_of_range.is_ok());
  EXPECT_NE(out_of_range.status().message().find("outside [0, 2)"), std::string::npos) << out_of_range.status().message();
  const Tensor ok = labels({0});
  auto bad = evaluate_op("NegativeLogLikelihoodLoss", {&logp, &ok}, {{"reduction", A::of_string("max")}}, 13);
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidModel);
}

}  // namespace
}  // namespace kiln::ops
