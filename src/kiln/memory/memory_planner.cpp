// Greedy-by-size arena planning.
#include "kiln/memory/memory_planner.h"

#include <algorithm>
#include <numeric>

namespace kiln::memory {

namespace {

int64_t align_up(int64_t n) { return (n + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment; }

bool lifetimes_overlap(const BufferRequest& a, const BufferRequest& b) {
  return a.first_step <= b.last_step && b.first_step <= a.last_step;
}

bool ranges_overlap(int64_t a_off, int64_t a_size, int64_t b_off, int64_t b_size) {
  return a_off < b_off + b_size && b_off < a_off + a_size;
}

struct Placed {
  size_t index;
  int64_t offset;
  int64_t size;
};

// Lowest offset where `size` bytes fit between the buffers live at the same time as `request`.
int64_t first_fit(const BufferRequest& request, int64_t size, const std::vector<BufferRequest>& requests,
                  const std::vector<Placed>& placed) {
  std::vector<Placed> live;
  for (const Placed& p : placed)
    if (lifetimes_overlap(request, requests[p.index])) live.push_back(p);
  std::sort(live.begin(), live.end(), [](const Placed& a, const Placed& b) { return a.offset < b.offset; });
  int64_t offset = 0;
  for (const Placed& p : live) {
    if (p.offset >= offset + size) break;
    offset = std::max(offset, p.offset + p.size);
  }
  return offset;
}

int64_t count_reused(const std::vector<BufferRequest>& requests, const std::vector<Placed>& placed) {
  int64_t reused = 0;
  for (const Placed& a : placed) {
    for (const Placed& b : placed) {
      const BufferRequest& ra = requests[a.index];
      const BufferRequest& rb = requests[b.index];
      if (rb.last_step < ra.first_step && ranges_overlap(a.offset, a.size, b.offset, b.size)) {
        ++reused;
        break;
      }
    }
  }
  return reused;
}

}  // namespace

MemoryPlan plan_memory(const std::vector<BufferRequest>& requests) {
  MemoryPlan plan;
  plan.offsets.assign(requests.size(), 0);
  plan.buffers = static_cast<int64_t>(requests.size());
  std::vector<size_t> order(requests.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return requests[a].bytes > requests[b].bytes; });
  std::vector<Placed> placed;
  for (size_t i : order) {
    const int64_t size = align_up(std::max<int64_t>(requests[i].bytes, 1));
    const int64_t offset = first_fit(requests[i], size, requests, placed);
    placed.push_back({i, offset, size});
    plan.offsets[i] = offset;
    plan.arena_bytes = std::max(plan.arena_bytes, offset + size);
    plan.naive_bytes += size;
  }
  plan.reused_buffers = count_reused(requests, placed);
  return plan;
}

}  // namespace kiln::memory
