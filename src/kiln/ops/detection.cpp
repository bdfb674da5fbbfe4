// Detection post-processing: NonMaxSuppression (per batch and class, greedy by descending score,
// ties by lower box index, boxes as corners or centres). The number of selected boxes depends on
// the data, so the rule runs the selection once the inputs are known.
#include <algorithm>
#include <array>
#include <numeric>

#include "kiln/ops/data_movement.h"
#include "kiln/ops/op_families.h"
#include "kiln/ops/op_helpers.h"
#include "kiln/ops/op_registry.h"

namespace kiln::ops {

namespace {

using Box = std::array<double, 4>;  // y1, x1, y2, x2 with y1 <= y2, x1 <= x2

Box corners(const Tensor& boxes, int64_t at, bool center_point) {
  const double a = element_as_double(boxes, at), b = element_as_double(boxes, at + 1);
  const double c = element_as_double(boxes, at + 2), d = element_as_double(boxes, at + 3);
  if (center_point) return {b - d / 2, a - c / 2, b + d / 2, a + c / 2};  // [x_c, y_c, w, h]
  return {std::min(a, c), std::min(b, d), std::max(a, c), std::max(b, d)};
}

double iou(const Box& p, const Box& q) {
  const double h = std::max(0.0, std::min(p[2], q[2]) - std::max(p[0], q[0]));
  const double w = std::max(0.0, std::min(p[3], q[3]) - std::max(p[1], q[1]));
  const double inter = h * w;
  const double uni = (p[2] - p[0]) * (p[3] - p[1]) + (q[2] - q[0]) * (q[3] - q[1]) - inter;
  return uni <= 0 ? 0.0 : inter / uni;
}

double optional_scalar(const Tensor* t, double fallback) { return t && t->element_count() > 0 ? element_as_double(*t, 0) : fallback; }

// Selected (batch, class, box) triples.
Result<std::vector<std::array<int64_t, 3>>> select(const ir::Node& node, const Tensor& boxes, const Tensor& scores,
                                                   const Tensor* max_out, const Tensor* iou_limit, const Tensor* score_limit) {
  if (boxes.rank() != 3 || boxes.shape()[2] != 4 || scores.rank() != 3 || scores.shape()[0] != boxes.shape()[0] ||
      scores.shape()[2] != boxes.shape()[1])
    return invalid_argument(node.describe() + ": boxes must be [B, N, 4] and scores [B, C, N]");
  const int64_t batches = boxes.shape()[0], n = boxes.shape()[1], classes = scores.shape()[1];
  const auto limit = static_cast<int64_t>(optional_scalar(max_out, 0));
  const double iou_threshold = optional_scalar(iou_limit, 0);
  const bool center_point = node.attr_int("center_point_box", 0) != 0;
  std::vector<std::array<int64_t, 3>> selected;
  for (int64_t b = 0; b < batches; ++b)
    for (int64_t c = 0; c < classes; ++c) {
      std::vector<int64_t> order;
      for (int64_t i = 0; i < n; ++i)
        if (!score_limit || element_as_double(scores, (b * classes + c) * n + i) > element_as_double(*score_limit, 0))
          order.push_back(i);
      auto score = [&](int64_t i) { return element_as_double(scores, (b * classes + c) * n + i); };
      std::stable_sort(order.begin(), order.end(), [&](int64_t x, int64_t y) { return score(x) > score(y); });
      std::vector<Box> kept;
      for (int64_t i : order) {
        if (static_cast<int64_t>(kept.size()) >= limit) break;
        const Box box = corners(boxes, (b * n + i) * 4, center_point);
        if (std::any_of(kept.begin(), kept.end(), [&](const Box& k) { return iou(k, box) > iou_threshold; })) continue;
        kept.push_back(box);
        selected.push_back({b, c, i});
      }
    }
  return selected;
}

Status nms_infer(InferenceContext& ctx) {
  ir::Dim count = ir::Dim::unknown();
  if (ctx.input_value(0) && ctx.input_value(1)) {
    KILN_ASSIGN_OR_RETURN(auto picked, select(ctx.node(), *ctx.input_value(0), *ctx.input_value(1), ctx.input_value(2),
                                              ctx.input_value(3), ctx.input_value(4)));
    count = ir::Dim(static_cast<int64_t>(picked.size()));
  }
  ctx.set_output_type(0, ir::TensorType{DType::kInt64, ir::Shape({count, ir::Dim(3)})});
  return Status::ok();
}

Status nms_kernel(KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(auto picked, select(ctx.node(), *ctx.input(0), *ctx.input(1), ctx.input(2), ctx.input(3), ctx.input(4)));
  int64_t* out = ctx.output(0)->data<int64_t>();
  for (size_t k = 0; k < picked.size(); ++k)
    for (size_t j = 0; j < 3; ++j) out[k * 3 + j] = picked[k][j];
  return Status::ok();
}

}  // namespace

void register_detection_ops(OpRegistry& r) {
  for (int v : {10, 11}) r.add({"", "NonMaxSuppression", v, with_required_inputs(2, nms_infer), nms_kernel});
}

}  // namespace kiln::ops
