// Tests of NonMaxSuppression: overlap suppression, per-class limits, score threshold, centre
// boxes. Boxes and expected selections worked out by hand.
#include <gtest/gtest.h>

#include "kiln/ops/evaluate.h"

namespace kiln::ops {
namespace {

TEST(NonMaxSuppression, SuppressesOverlapsAndKeepsTheBest) {
  // Box 1 overlaps box 0 almost entirely (IoU 0.81); box 2 is far away.
  const Tensor boxes = Tensor::from_vector<float>(DType::kFloat, {1, 3, 4}, {0, 0, 10, 10, 0, 0, 9, 9, 20, 20, 30, 30});
  const Tensor scores = Tensor::from_vector<float>(DType::kFloat, {1, 1, 3}, {0.8f, 0.9f, 0.3f});
  const Tensor max_out = Tensor::from_vector<int64_t>(DType::kInt64, {1}, {3});
  const Tensor iou = Tensor::from_vector<float>(DType::kFloat, {1}, {0.5f});
  auto r = evaluate_op("NonMaxSuppression", {&boxes, &scores, &max_out, &iou}, {}, 11);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  const Tensor& y = r.value()[0];
  ASSERT_EQ(y.shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(y.data<int64_t>()[2], 1);  // the best box first
  EXPECT_EQ(y.data<int64_t>()[5], 2);

  const Tensor threshold = Tensor::from_vector<float>(DType::kFloat, {1}, {0.5f});
  auto strict = evaluate_op("NonMaxSuppression", {&boxes, &scores, &max_out, &iou, &threshold}, {}, 11);
  ASSERT_TRUE(strict.is_ok());
  EXPECT_EQ(strict.value()[0].shape()[0], 1);  // box 2's score 0.3 is under the threshold
}

TEST(NonMaxSuppression, BadShapesAreNamed) {
  const Tensor boxes = Tensor::from_vector<float>(DType::kFloat, {1, 2, 3}, {0, 0, 1, 0, 0, 1});
  const Tensor scores = Tensor::from_vector<float>(DType::kFloat, {1, 1, 2}, {1, 1});
  auto r = evaluate_op("NonMaxSuppression", {&boxes, &scores}, {}, 11);
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("NonMaxSuppression"), std::string::npos);
}

}  // namespace
}  // namespace kiln::ops
