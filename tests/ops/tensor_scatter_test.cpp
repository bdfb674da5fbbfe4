// Tests of kiln.TensorScatter (ONNX's TensorScatter-24): linear and circular writes per batch at
// their write indices, the default axis (-2) and no indices (position 0), an output that shares the
// cache's buffer (only the update is written), and the refusals: a write past the end, axis 0,
// shapes that do not fit, an unknown mode.
#include "kiln/ops/evaluate.h"
#include "ops/family_test_util.h"

namespace kiln::ops::testing {
namespace {

// cache[b, h, s, d] = 100 b + 10 h + s + d / 10, of shape [batch, heads, capacity, depth].
Tensor numbered_cache(int64_t batch, int64_t heads, int64_t capacity, int64_t depth) {
  std::vector<float> v;
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t s = 0; s < capacity; ++s)
        for (int64_t d = 0; d < depth; ++d) v.push_back(static_cast<float>(100 * b + 10 * h + s) + 0.1f * static_cast<float>(d));
  return floats({batch, heads, capacity, depth}, v);
}

// What ONNX's pseudocode gives: past with update's rows written at write_indices[b] (+ i, modulo
// the capacity when circular).
std::vector<double> scattered(const Tensor& past, const Tensor& update, const std::vector<int64_t>& at, bool circular) {
  const std::vector<int64_t>& p = past.shape();
  const int64_t seq = update.shape()[2];
  const std::vector<float> given = values<float>(past);
  std::vector<double> want(given.begin(), given.end());
  for (int64_t b = 0; b < p[0]; ++b)
    for (int64_t h = 0; h < p[1]; ++h)
      for (int64_t i = 0; i < seq; ++i)
        for (int64_t d = 0; d < p[3]; ++d) {
          int64_t s = at[static_cast<size_t>(b)] + i;
          if (circular) s %= p[2];
          want[static_cast<size_t>(((b * p[1] + h) * p[2] + s) * p[3] + d)] =
              update.data<float>()[((b * p[1] + h) * seq + i) * p[3] + d];
        }
  return want;
}

TEST(TensorScatter, WritesEachBatchAtItsIndexLinearlyOrCircularly) {
  const Tensor past = numbered_cache(2, 3, 5, 2);
  const Tensor update = random_tensor(DType::kFloat, {2, 3, 2, 2}, 7);
  const Tensor at = int64s({2}, {3, 0});
  auto linear = run_kiln("TensorScatter", {&past, &update, &at});
  ASSERT_TRUE(linear.is_ok()) << linear.status().to_string();
  expect_near(linear.value()[0], scattered(past, update, {3, 0}, false), past.shape());
  const Tensor wrapping = int64s({2}, {4, 1});
  auto circular = run_kiln("TensorScatter", {&past, &update, &wrapping}, {{"mode", ir::Attribute::of_string("circular")}});
  ASSERT_TRUE(circular.is_ok()) << circular.status().to_string();
  expect_near(circular.value()[0], scattered(past, update, {4, 1}, true), past.shape());
}

TEST(TensorScatter, WithoutIndicesWritesAtZeroAlongTheAxisGiven) {
  // Axis 1 of [batch, capacity, width]: the update's rows go to the first positions.
  const Tensor past = floats({1, 4, 2}, {1, 1, 2, 2, 3, 3, 4, 4});
  const Tensor update = floats({1, 2, 2}, {-1, -2, -3, -4});
  auto out = run_kiln("TensorScatter", {&past, &update}, {{"axis", attr_i(1)}});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  expect_near(out.value()[0], {-1, -2, -3, -4, 3, 3, 4, 4}, {1, 4, 2});
}

TEST(TensorScatter, AnOutputSharingTheCacheGetsOnlyTheUpdate) {
  Tensor cache = numbered_cache(1, 2, 6, 3);
  const Tensor before = cache.clone();
  const Tensor update = random_tensor(DType::kFloat, {1, 2, 1, 3}, 3);
  const Tensor at = int64s({1}, {4});
  ir::Graph g;
  ir::Node* node = g.add_node("TensorScatter",
                              {g.add_value("past", ir::make_type(DType::kFloat, cache.shape())),
                               g.add_value("update", ir::make_type(DType::kFloat, update.shape())),
                               g.add_value("at", ir::make_type(DType::kInt64, {1}))},
                              {g.add_value("present", ir::make_type(DType::kFloat, cache.shape()))}, "update", "kiln", 1);
  auto def = resolve_op(OpRegistry::global(), *node);
  ASSERT_TRUE(def.is_ok());
  EXPECT_EQ(def.value()->in_place_input, 0);
  const std::vector<const Tensor*> inputs = {&cache, &update, &at};
  KernelContext ctx(*node, inputs, {&cache});  // the output is the cache itself
  ASSERT_TRUE(def.value()->reference(ctx).is_ok());
  expect_near(cache, scattered(before, update, {4}, false), cache.shape());
}

TEST(TensorScatter, RefusesWritesPastTheEndAndShapesThatDoNotFit) {
  const Tensor past = numbered_cache(1, 2, 4, 2);
  const Tensor update = random_tensor(DType::kFloat, {1, 2, 2, 2}, 1);
  const Tensor late = int64s({1}, {3}), negative = int64s({1}, {-1}), two = int64s({2}, {0, 0});
  for (const Tensor* at : {&late, &negative, &two}) {
    auto r = run_kiln("TensorScatter", {&past, &update, at});
    ASSERT_FALSE(r.is_ok());
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << r.status().to_string();
  }
  EXPECT_NE(run_kiln("TensorScatter", {&past, &update, &late}).status().message().find("write index 3"), std::string::npos);
  const Tensor wide = random_tensor(DType::kFloat, {1, 2, 5, 2}, 2), other = random_tensor(DType::kFloat, {1, 3, 1, 2}, 2);
  for (const Tensor* bad : {&wide, &other}) {
    auto r = run_kiln("TensorScatter", {&past, bad});
    ASSERT_FALSE(r.is_ok());
    EXPECT_NE(r.status().message().find("does not fit"), std::string::npos) << r.status().message();
  }
  auto batch_axis = run_kiln("TensorScatter", {&past, &update}, {{"axis", attr_i(0)}});
  EXPECT_NE(batch_axis.status().message().find("batch axis"), std::string::npos) << batch_axis.status().to_string();
  auto mode = run_kiln("TensorScatter", {&past, &update}, {{"mode", ir::Attribute::of_string("ring")}});
  EXPECT_NE(mode.status().message().find("mode"), std::string::npos) << mode.status().to_string();
}

}  // namespace
}  // namespace kiln::ops::testing
