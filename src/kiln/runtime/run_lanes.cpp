// Lanes for concurrent runs of one session (run_lanes.h).
#include "kiln/runtime/run_lanes.h"

#include <algorithm>

namespace kiln::runtime {

size_t RunLanes::acquire(std::unique_lock<std::mutex>& lock) {
  for (;;) {
    for (size_t i = 0; i < lanes_.size(); ++i)
      if (!lanes_[i]->busy) {
        lanes_[i]->busy = true;
        return i;
      }
    if (lanes_.size() < max_lanes_) {
      auto lane = std::make_unique<Lane>();
      lane->plans = VariantCache(plans_per_lane_);
      // A lane that cannot reserve its arena still runs: the run grows it, or fails classified.
      (void)lane->executor.reserve_arena(reserved_arena_bytes_);
      lane->busy = true;
      lanes_.push_back(std::move(lane));
      return lanes_.size() - 1;
    }
    idle_.wait(lock);
  }
}

void RunLanes::release(size_t lane) {
  lanes_[lane]->busy = false;
  idle_.notify_one();
}

Status RunLanes::reserve_arena(int64_t bytes) {
  reserved_arena_bytes_ = std::max(reserved_arena_bytes_, bytes);
  if (lanes_.empty()) {  // lane 0 exists from the start, so that the load-time reservation lands
    lanes_.push_back(std::make_unique<Lane>());
    lanes_.back()->plans = VariantCache(plans_per_lane_);
  }
  for (auto& lane : lanes_) KILN_RETURN_IF_ERROR(lane->executor.reserve_arena(bytes));
  return Status::ok();
}

}  // namespace kiln::runtime
