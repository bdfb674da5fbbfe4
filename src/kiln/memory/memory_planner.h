// Memory planner: places buffers with known sizes and lifetimes at offsets in one arena so that
// buffers alive at the same time never overlap, reusing memory of dead buffers (greedy by size,
// first fit). Offsets are aligned for vector loads.
#pragma once

#include <cstdint>
#include <vector>

namespace kiln::memory {

constexpr int64_t kArenaAlignment = 64;

struct BufferRequest {
  int64_t bytes = 0;
  int64_t first_step = 0;
  int64_t last_step = 0;  // inclusive
};

struct MemoryPlan {
  std::vector<int64_t> offsets;  // one per request, in request order
  int64_t arena_bytes = 0;       // planned peak
  int64_t naive_bytes = 0;       // sum of all (aligned) buffers: no reuse
  int64_t buffers = 0;
  int64_t reused_buffers = 0;    // buffers placed (partly) in memory an earlier, dead buffer used
};

MemoryPlan plan_memory(const std::vector<BufferRequest>& requests);

}  // namespace kiln::memory
