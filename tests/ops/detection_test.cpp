// Tests of NonMaxSuppression on hand-computed boxes: A = [0,0,1,1] (0.9), B = [0,0.1,1,1.1] (0.8,
// IoU with A = 0.9 / 1.1 = 0.818), C = [0,2,1,3] (0.7, disjoint) and D = A with flipped corners (0.9).
#include <gtest/gtest.h>

#include "ops/rule_harness.h"

namespace kiln::ops {
namespace {

using namespace testing;

Tensor boxes() { return f32({1, 4, 4}, {0, 0, 1, 1, 0, 0.1f, 1, 1.1f, 0, 2, 1, 3, 1, 1, 0, 0}); }
Tensor scores() { return f32({1, 1, 4}, {0.9f, 0.8f, 0.7f, 0.9f}); }

std::vector<int64_t> nms(const Tensor& b, const Tensor& s, int64_t max_boxes, float iou, const Tensor* score_threshold = nullptr,
                         const Attrs& attrs = {}) {
  Tensor m = i64({max_boxes}), t = f32({1}, {iou});
  Tensor y = eval("NonMaxSuppression", {&b, &s, &m, &t, score_threshold}, attrs, 11)[0];
  EXPECT_EQ(y.rank(), 2u);
  return elements<int64_t>(y);
}

TEST(NonMaxSuppression, GreedyByScoreWithTiesByIndex) {
  const Tensor b = boxes(), s = scores();
  // Order A(0), D(3) (tie, lower index first), B(1), C(2); IoU 0.5 suppresses D and B.
  EXPECT_EQ(nms(b, s, 10, 0.5f), (std::vector<int64_t>{0, 0, 0, 0, 0, 2}));
  // IoU 0.85 keeps B (0.818) but not D (1.0).
  EXPECT_EQ(nms(b, s, 10, 0.85f), (std::vector<int64_t>{0, 0, 0, 0, 0, 1, 0, 0, 2}));
  // IoU threshold 1: nothing exceeds it, all kept in score order.
  EXPECT_EQ(nms(b, s, 10, 1.0f), (std::vector<int64_t>{0, 0, 0, 0, 0, 3, 0, 0, 1, 0, 0, 2}));
  EXPECT_EQ(nms(b, s, 2, 0.85f), (std::vector<int64_t>{0, 0, 0, 0, 0, 1}));
  EXPECT_TRUE(nms(b, s, 0, 0.5f).empty());
  Tensor threshold = f32({1}, {0.85f});
  EXPECT_EQ(nms(b, s, 10, 0.0f, &threshold), (std::vector<int64_t>{0, 0, 0}));
}

TEST(NonMaxSuppression, CenterPointBoxesAndClassesInOrder) {
  // The same A, B, C, D as [x_center, y_center, width, height]; class 1 has the scores reversed.
  Tensor b = f32({1, 4, 4}, {0.5f, 0.5f, 1, 1, 0.6f, 0.5f, 1, 1, 2.5f, 0.5f, 1, 1, 0.5f, 0.5f, 1, 1});
  Tensor s = f32({1, 2, 4}, {0.9f, 0.8f, 0.7f, 0.9f, 0.1f, 0.2f, 0.3f, 0.4f});
  EXPECT_EQ(nms(b, s, 10, 0.5f, nullptr, {{"center_point_box", int_attr(1)}}),
            (std::vector<int64_t>{0, 0, 0, 0, 0, 2, 0, 1, 3, 0, 1, 2}));
}

TEST(NonMaxSuppression, RuleKnowsTheCountOnlyFromValues) {
  const Tensor b = boxes(), s = scores();
  Tensor m = i64({10}), t = f32({1}, {0.5f});
  EXPECT_EQ(rule_type("NonMaxSuppression", {known(b), known(s), known(m), known(t)}, {}, 11).to_string(), "int64[2,3]");
  EXPECT_EQ(rule_type("NonMaxSuppression", {RuleInput{typed(DType::kFloat, {1, 4, 4})}, known(s), known(m), known(t)}, {}, 11)
                .to_string(),
            "int64[?,3]");
  std::string e = rule_error("NonMaxSuppression", {RuleInput{ir::make_type(DType::kFloat, {1, 4, 5})}, known(s)}, {}, 11);
  EXPECT_NE(e.find("node_under_test"), std::string::npos);
  EXPECT_NE(e.find("boxes"), std::string::npos);
  Tensor bad_iou = f32({1}, {1.5f});
  EXPECT_NE(rule_error("NonMaxSuppression", {known(b), known(s), known(m), known(bad_iou)}, {}, 11).find("iou_threshold"),
            std::string::npos);
}

}  // namespace
}  // namespace kiln::ops
