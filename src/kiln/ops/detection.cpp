// Op family detection: NonMaxSuppression (opsets 10 and 11). Greedy selection per batch and class
// as ONNX Runtime runs it: candidates above the score threshold in descending score order (ties
// by box index), each kept unless its IoU with an already kept box exceeds the IoU threshold.
// The output's length depends on the values, so the shape rule runs the selection when they are known.
// Each (batch, class) selects on its own: the cpu provider runs them on its threads
// (non_max_suppression.h).
#include <algorithm>
#include <cmath>
#include <optional>

#include "kiln/ops/family_support.h"
#include "kiln/ops/non_max_suppression.h"
#include "kiln/ops/op_families.h"
#include "kiln/ops/op_helpers.h"

namespace kiln::ops {
namespace {

// Inputs: boxes [B, N, 4], scores [B, C, N], then the optional scalars below.
constexpr size_t kBoxes = 0, kScores = 1, kMaxPerClass = 2, kIouThreshold = 3, kScoreThreshold = 4;

struct NmsParams {
  int64_t max_per_class = 0;  // absent: 0, no output
  float iou_threshold = 0;
  std::optional<float> score_threshold;
  bool center_point_box = false;
};

// A box as corners with min <= max on each axis.
struct Box {
  float y_min, x_min, y_max, x_max;
  float area() const { return (y_max - y_min) * (x_max - x_min); }
};

// [y1, x1, y2, x2] (any two opposite corners) or, with center_point_box, [x_center, y_center, w, h].
Box read_box(const float* b, bool center_point_box) {
  if (center_point_box) {
    const float half_w = b[2] / 2, half_h = b[3] / 2;
    return {b[1] - half_h, b[0] - half_w, b[1] + half_h, b[0] + half_w};
  }
  return {std::min(b[0], b[2]), std::min(b[1], b[3]), std::max(b[0], b[2]), std::max(b[1], b[3])};
}

// The boxes kept so far, one array per coordinate, so that testing a candidate against all of them
// is one vectorised pass (the kept set reaches thousands when a detector's scores are flat).
struct KeptBoxes {
  std::vector<float> y_min, x_min, y_max, x_max, area;

  size_t size() const { return area.size(); }
  void add(const Box& b) {
    y_min.push_back(b.y_min);
    x_min.push_back(b.x_min);
    y_max.push_back(b.y_max);
    x_max.push_back(b.x_max);
    area.push_back(b.area());
  }
  // Whether IoU(kept box, b) > threshold for some kept box; empty boxes and disjoint boxes never
  // suppress (IoU computed as ONNX Runtime does: intersection / union > threshold).
  bool any_suppresses(const Box& b, float threshold) const {
    const float area_b = b.area();
    if (!(area_b > 0)) return false;
    constexpr size_t kBlock = 64;  // stop at the first block with a hit
    for (size_t start = 0; start < size(); start += kBlock) {
      const size_t end = std::min(size(), start + kBlock);
      int hit = 0;
#pragma omp simd reduction(| : hit)
      for (size_t k = start; k < end; ++k) {
        const float h = std::min(y_max[k], b.y_max) - std::max(y_min[k], b.y_min);
        const float w = std::min(x_max[k], b.x_max) - std::max(x_min[k], b.x_min);
        const float intersection = h * w, union_area = area[k] + area_b - intersection;
        hit |= (area[k] > 0) & (h > 0) & (w > 0) & (union_area > 0) & (intersection / union_area > threshold);
      }
      if (hit) return true;
    }
    return false;
  }
};

// The value of an optional scalar input, or nullopt when omitted.
template <class Ctx>
Result<std::optional<float>> optional_float(const Ctx& ctx, const Tensor* t, const std::string& what) {
  if (!t) return std::optional<float>();
  if (t->element_count() != 1) return ctx.error(what + " must hold one value");
  KILN_ASSIGN_OR_RETURN(std::vector<float> v, read_floats(*t, what));
  return std::optional<float>(v[0]);
}

template <class Ctx>
Result<NmsParams> nms_params(const Ctx& ctx, const std::vector<const Tensor*>& in) {
  NmsParams p;
  p.center_point_box = ctx.node().attr_int("center_point_box", 0) != 0;
  if (const Tensor* m = in[kMaxPerClass]) {
    if (m->element_count() != 1) return ctx.error("max_output_boxes_per_class must hold one value");
    KILN_ASSIGN_OR_RETURN(std::vector<int64_t> v, read_int64s(*m, "max_output_boxes_per_class"));
    p.max_per_class = std::max<int64_t>(v[0], 0);
  }
  KILN_ASSIGN_OR_RETURN(std::optional<float> iou, optional_float(ctx, in[kIouThreshold], "iou_threshold"));
  if (iou && !(*iou >= 0 && *iou <= 1)) return ctx.error("iou_threshold must be in [0, 1]");
  p.iou_threshold = iou.value_or(0.0f);
  KILN_ASSIGN_OR_RETURN(p.score_threshold, optional_float(ctx, in[kScoreThreshold], "score_threshold"));
  return p;
}

// The selected [batch, class, box] triples, flattened, in batch, class, then selection order.
template <class Ctx>
Result<std::vector<int64_t>> select_boxes(const Ctx& ctx, const std::vector<const Tensor*>& in, const TaskRunner& run_tasks) {
  KILN_ASSIGN_OR_RETURN(NmsParams p, nms_params(ctx, in));
  const Tensor& boxes = *in[kBoxes];
  const Tensor& scores = *in[kScores];
  const std::vector<int64_t>& bs = boxes.shape();
  const std::vector<int64_t>& ss = scores.shape();
  if (bs.size() != 3 || bs[2] != 4 || ss.size() != 3 || ss[0] != bs[0] || ss[2] != bs[1])
    return ctx.error("boxes " + shape_to_string(bs) + " and scores " + shape_to_string(ss) +
                     " must be [batches, boxes, 4] and [batches, classes, boxes]");
  const int64_t batches = bs[0], count = bs[1], classes = ss[1];
  const float* box_data = boxes.data<float>();
  const float* score_data = scores.data<float>();
  // Each (batch, class) selects on its own; a provider may run them on its threads.
  std::vector<std::vector<int64_t>> selected(static_cast<size_t>(batches * classes));
  auto select = [&](int64_t task) {
    const int64_t b = task / classes, c = task % classes;
    const float* s = score_data + task * count;
    // NaN scores are never candidates: they have no place in the order.
    std::vector<int64_t> order;
    for (int64_t i = 0; i < count; ++i)
      if (!std::isnan(s[i]) && (!p.score_threshold || s[i] > *p.score_threshold)) order.push_back(i);
    std::stable_sort(order.begin(), order.end(), [&](int64_t x, int64_t y) { return s[x] > s[y]; });
    KeptBoxes kept;
    std::vector<int64_t>& out = selected[static_cast<size_t>(task)];
    for (int64_t i : order) {
      if (static_cast<int64_t>(kept.size()) >= p.max_per_class) break;
      const Box box = read_box(box_data + (b * count + i) * 4, p.center_point_box);
      if (kept.any_suppresses(box, p.iou_threshold)) continue;
      kept.add(box);
      out.insert(out.end(), {b, c, i});
    }
  };
  run_tasks(batches * classes, select);
  std::vector<int64_t> out;
  for (const std::vector<int64_t>& s : selected) out.insert(out.end(), s.begin(), s.end());
  return out;
}

Status nms_rule(InferenceContext& ctx) {
  KILN_RETURN_IF_ERROR(check_input_count(ctx, 2, 5));
  for (size_t i : {kBoxes, kScores, kIouThreshold, kScoreThreshold})
    if (ctx.has_input(i)) KILN_RETURN_IF_ERROR(check_input_dtype<TypeList<float>>(ctx, i));
  if (ctx.has_input(kMaxPerClass)) KILN_RETURN_IF_ERROR(check_input_dtype<TypeList<int64_t>>(ctx, kMaxPerClass));
  const auto& boxes = ctx.input_type(kBoxes).shape;
  const auto& scores = ctx.input_type(kScores).shape;
  if (boxes && (boxes->rank() != 3 || ((*boxes)[2].is_static() && (*boxes)[2].value() != 4)))
    return ctx.error("boxes must be [batches, boxes, 4], got " + boxes->to_string());
  if (scores && scores->rank() != 3) return ctx.error("scores must be [batches, classes, boxes], got " + scores->to_string());
  // The number of selected boxes is known only from the values.
  ir::Dim selected = ir::Dim::unknown();
  std::vector<const Tensor*> values;
  bool known = true;
  for (size_t i = 0; i < 5; ++i) {
    values.push_back(ctx.has_input(i) ? ctx.input_value(i) : nullptr);
    known = known && (!ctx.has_input(i) || values.back());
  }
  if (known) {
    KILN_ASSIGN_OR_RETURN(std::vector<int64_t> triples, select_boxes(ctx, values, run_in_order));
    selected = ir::Dim(static_cast<int64_t>(triples.size() / 3));
  }
  ctx.set_output_type(0, ir::TensorType{DType::kInt64, ir::Shape({selected, ir::Dim(3)})});
  return Status::ok();
}

Status nms_kernel(KernelContext& ctx) { return non_max_suppression(ctx, run_in_order); }

}  // namespace

Status non_max_suppression(KernelContext& ctx, const TaskRunner& run) {
  std::vector<const Tensor*> in;
  for (size_t i = 0; i < 5; ++i) in.push_back(ctx.input(i));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> triples, select_boxes(ctx, in, run));
  Tensor& y = *ctx.output(0);
  if (y.element_count() != static_cast<int64_t>(triples.size()))
    return ctx.error("output holds " + std::to_string(y.element_count() / 3) + " selections, the inputs give " +
                     std::to_string(triples.size() / 3));
  std::copy(triples.begin(), triples.end(), y.data<int64_t>());
  return Status::ok();
}

void register_detection_ops(OpRegistry& r) {
  for (int v : {10, 11}) r.add({"", "NonMaxSuppression", v, nms_rule, nms_kernel});
}

}  // namespace kiln::ops
