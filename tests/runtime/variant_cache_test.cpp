// Tests of VariantCache: hits and misses by exact signature, least-recently-used eviction at
// capacity, and plans kept alive for a run that still holds them after eviction.
#include "kiln/runtime/variant_cache.h"

#include <gtest/gtest.h>

namespace kiln::runtime {
namespace {

std::shared_ptr<const ExecutionPlan> plan_for_batch(int64_t n) {
  auto plan = std::make_shared<ExecutionPlan>();
  plan->input_shapes = {{n, 4}};
  return plan;
}

TEST(VariantCache, FindsByExactSignatureAndEvictsTheLeastRecentlyUsed) {
  VariantCache cache(2);
  EXPECT_EQ(cache.find({{1, 4}}), nullptr);
  cache.add({{1, 4}}, plan_for_batch(1));
  cache.add({{2, 4}}, plan_for_batch(2));
  ASSERT_NE(cache.find({{1, 4}}), nullptr);  // now {1,4} is the most recently used
  cache.add({{3, 4}}, plan_for_batch(3));     // evicts {2,4}
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_EQ(cache.find({{2, 4}}), nullptr);
  EXPECT_NE(cache.find({{1, 4}}), nullptr);
  EXPECT_NE(cache.find({{3, 4}}), nullptr);
  EXPECT_EQ(cache.stats().built, 3);
  EXPECT_EQ(cache.stats().evictions, 1);
  EXPECT_EQ(cache.stats().hits, 3);
  EXPECT_EQ(cache.stats().misses, 2);
}

TEST(VariantCache, APlanInUseOutlivesItsEviction) {
  VariantCache cache(1);
  cache.add({{1, 4}}, plan_for_batch(1));
  std::shared_ptr<const ExecutionPlan> running = cache.find({{1, 4}});
  cache.add({{2, 4}}, plan_for_batch(2));
  EXPECT_EQ(cache.find({{1, 4}}), nullptr);
  EXPECT_EQ(running->input_shapes[0][0], 1);
  EXPECT_EQ(VariantCache(0).capacity(), 1u) << "a cache holds at least the plan being run";
}

}  // namespace
}  // namespace kiln::runtime
