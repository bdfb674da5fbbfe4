// Tests of the accuracy measures of a reduced precision (runtime/precision_accuracy.h): errors,
// cosine and top-k agreement computed by hand, budgets parsed and held.
#include "kiln/runtime/precision_accuracy.h"

#include <gtest/gtest.h>

namespace kiln::runtime {
namespace {

Tensor floats(std::vector<int64_t> shape, std::vector<float> values) {
  Tensor t = Tensor::allocate(DType::kFloat, std::move(shape));
  std::copy(values.begin(), values.end(), t.data<float>());
  return t;
}

TEST(PrecisionAccuracy, MeasuresErrorsCosineAndTopKAgreement) {
  // Two rows of 6 class scores: row 0 keeps its best class, row 1 swaps its best two.
  const Tensor reference = floats({2, 6}, {5, 1, 0, 0, 0, 0, 1, 4, 3, 0, 0, 0});
  const Tensor reduced = floats({2, 6}, {5.5f, 1, 0, 0, 0, 0, 1, 3, 4, 0, 0, 0});
  const auto accuracy = compare_outputs({{{"scores", reference}}}, {{{"scores", reduced}}}).value();
  ASSERT_EQ(accuracy.size(), 1u);
  EXPECT_EQ(accuracy[0].output, "scores");
  EXPECT_DOUBLE_EQ(accuracy[0].max_abs_error, 1.0);
  EXPECT_DOUBLE_EQ(accuracy[0].max_relative_error, 1.0 / 5.0);
  EXPECT_DOUBLE_EQ(accuracy[0].top1, 0.5);
  EXPECT_DOUBLE_EQ(accuracy[0].top5, 1.0);
  const double dot = 5 * 5.5 + 1 + 1 + 12 + 12, norms = std::sqrt((25 + 1 + 1 + 16 + 9) * (30.25 + 1 + 1 + 9 + 16));
  EXPECT_NEAR(accuracy[0].cosine, dot / norms, 1e-12);
}

TEST(PrecisionAccuracy, NonScoreOutputsHaveNoTopKAndNanCountsAsInfiniteError) {
  const Tensor reference = floats({1, 2, 2}, {1, 2, 3, 4});
  const Tensor reduced = floats({1, 2, 2}, {1, 2, 3, std::numeric_limits<float>::quiet_NaN()});
  const auto accuracy = compare_outputs({{{"map", reference}}}, {{{"map", reduced}}}).value();
  EXPECT_LT(accuracy[0].top1, 0);
  EXPECT_TRUE(std::isinf(accuracy[0].max_abs_error));
  const auto breach = budget_breach(parse_accuracy_budget("abs=1").value(), accuracy);
  ASSERT_TRUE(breach.has_value());
  EXPECT_NE(breach->find("'map'"), std::string::npos) << *breach;
}

TEST(PrecisionAccuracy, BudgetsParseAndHold) {
  const AccuracyBudget budget = parse_accuracy_budget("rel=0.01,abs=0.5,cos=0.999,top1=0.99,top5=1").value();
  EXPECT_DOUBLE_EQ(*budget.max_relative_error, 0.01);
  EXPECT_DOUBLE_EQ(*budget.min_top5, 1.0);
  EXPECT_TRUE(parse_accuracy_budget("").value().empty());
  report::OutputAccuracy good{"y", 0.1, 0.005, 0.9999, 1.0, 1.0};
  EXPECT_FALSE(budget_breach(budget, {good}).has_value());
  report::OutputAccuracy low_top1 = good;
  low_top1.top1 = 0.98;
  const auto breach = budget_breach(budget, {good, low_top1});
  ASSERT_TRUE(breach.has_value());
  EXPECT_NE(breach->find("top-1"), std::string::npos) << *breach;
  for (const char* bad : {"rel", "rel=", "rel=abc", "rel=-1", "cos=1.5", "top5=2", "foo=1", "rel=inf"})
    EXPECT_EQ(parse_accuracy_budget(bad).status().code(), StatusCode::kInvalidArgument) << bad;
}

TEST(PrecisionAccuracy, BudgetUsageIsTheWorstShareOfAnyLimit) {
  const AccuracyBudget budget = parse_accuracy_budget("rel=0.01,cos=0.99,top1=0.9").value();
  // rel 0.005 of 0.01: 0.5; 1 - cos 0.004 of 0.01: 0.4; 1 - top1 0.05 of 0.1: 0.5 (abs: no limit).
  report::OutputAccuracy a{"y", 100, 0.005, 0.996, 0.95, 1.0};
  EXPECT_NEAR(budget_usage(budget, {a}), 0.5, 1e-12);
  report::OutputAccuracy worse = a;
  worse.cosine = 0.97;  // 0.03 of 0.01
  EXPECT_NEAR(budget_usage(budget, {a, worse}), 3.0, 1e-9);
  EXPECT_TRUE(budget_breach(budget, {a, worse}).has_value());
  // A zero limit: any error uses an infinite share, none uses nothing.
  const AccuracyBudget exact = parse_accuracy_budget("abs=0").value();
  EXPECT_TRUE(std::isinf(budget_usage(exact, {a})));
  a.max_abs_error = 0;
  EXPECT_EQ(budget_usage(exact, {a}), 0.0);
}

TEST(PrecisionAccuracy, OutputsThatDisagreeInShapeAreRefused) {
  const auto refused = compare_outputs({{{"y", floats({2}, {1, 2})}}}, {{{"y", floats({1, 2}, {1, 2})}}});
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace kiln::runtime
