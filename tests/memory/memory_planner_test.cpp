// Tests of the arena planner: no overlap of live buffers, reuse of dead ones, alignment.
#include <gtest/gtest.h>

#include <random>

#include "kiln/memory/memory_planner.h"

namespace kiln::memory {
namespace {

bool overlap(int64_t a, int64_t as, int64_t b, int64_t bs) { return a < b + bs && b < a + as; }

void expect_valid(const std::vector<BufferRequest>& req, const MemoryPlan& plan) {
  for (size_t i = 0; i < req.size(); ++i) {
    EXPECT_EQ(plan.offsets[i] % kArenaAlignment, 0);
    EXPECT_LE(plan.offsets[i] + req[i].bytes, plan.arena_bytes);
    for (size_t j = 0; j < i; ++j) {
      const bool live_together = req[i].first_step <= req[j].last_step && req[j].first_step <= req[i].last_step;
      if (live_together)
        EXPECT_FALSE(overlap(plan.offsets[i], req[i].bytes, plan.offsets[j], req[j].bytes)) << i << " vs " << j;
    }
  }
}

TEST(MemoryPlanner, ChainReusesMemory) {
  // a -> b -> c -> d: each buffer dies after the next is made, so two slots suffice.
  std::vector<BufferRequest> req = {{1000, 0, 1}, {1000, 1, 2}, {1000, 2, 3}, {1000, 3, 4}};
  MemoryPlan plan = plan_memory(req);
  expect_valid(req, plan);
  EXPECT_EQ(plan.naive_bytes, 4 * 1024);
  EXPECT_EQ(plan.arena_bytes, 2 * 1024);
  EXPECT_EQ(plan.reused_buffers, 2);
}

TEST(MemoryPlanner, AllLiveNeedsNaiveTotal) {
  std::vector<BufferRequest> req = {{100, 0, 5}, {200, 1, 5}, {300, 2, 5}};
  MemoryPlan plan = plan_memory(req);
  expect_valid(req, plan);
  EXPECT_EQ(plan.arena_bytes, plan.naive_bytes);
  EXPECT_EQ(plan.reused_buffers, 0);
}

TEST(MemoryPlanner, RandomRequestsNeverOverlapWhileLive) {
  std::mt19937 rng(7);
  std::vector<BufferRequest> req;
  for (int i = 0; i < 300; ++i) {
    const int64_t first = rng() % 100;
    req.push_back({static_cast<int64_t>(rng() % 5000), first, first + static_cast<int64_t>(rng() % 10)});
  }
  MemoryPlan plan = plan_memory(req);
  expect_valid(req, plan);
  EXPECT_LT(plan.arena_bytes, plan.naive_bytes);
}

TEST(MemoryPlanner, EmptyPlan) {
  MemoryPlan plan = plan_memory({});
  EXPECT_EQ(plan.arena_bytes, 0);
  EXPECT_EQ(plan.naive_bytes, 0);
}

}  // namespace
}  // namespace kiln::memory
