// RunLanes: what lets several runs of one session proceed at once. A lane is the working state of
// one run in flight: an Executor (its arena) and, per input-shape signature, a plan of its own,
// since kernels keep per-run state (oneDNN argument maps and scratchpads, Winograd workspaces);
// weights are shared read-only between the plans (PlanContext). Lane 0's plans are the session's
// variant cache; the others keep their own, as bounded. A run takes an idle lane, or makes a new
// one while fewer than the maximum exist, or waits for one. The session's mutex guards it all.
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <vector>

#include "kiln/runtime/executor.h"
#include "kiln/runtime/variant_cache.h"

namespace kiln::runtime {

class RunLanes {
 public:
  // At most `max_lanes` runs at once; each lane beyond the first keeps at most `plans_per_lane`
  // plans. Set before the first run.
  void set_limits(size_t max_lanes, size_t plans_per_lane) {
    max_lanes_ = max_lanes < 1 ? 1 : max_lanes;
    plans_per_lane_ = plans_per_lane;
  }

  // An idle lane, marked busy; waits (releasing `lock`, the session's) while every lane is busy
  // and no more may be made. Lane 0 is preferred: its plans are the session's cached variants.
  size_t acquire(std::unique_lock<std::mutex>& lock);
  // Marks `lane` idle again (under the lock) and wakes a waiting run.
  void release(size_t lane);

  // A lane's Executor. Take it under the lock: another run may add a lane, moving the list; the
  // Executor itself stays where it is as long as the session lives.
  Executor& executor(size_t lane) { return lanes_[lane]->executor; }
  // The plans of a lane beyond the first (lane 0 uses the session's variant cache).
  VariantCache& plans(size_t lane) { return lanes_[lane]->plans; }
  size_t size() const { return lanes_.size(); }
  size_t max_lanes() const { return max_lanes_; }
  // The arena every lane reserves (a shape profile's max shapes): the existing ones now, new ones when made.
  Status reserve_arena(int64_t bytes);

 private:
  struct Lane {
    Executor executor;
    VariantCache plans;
    bool busy = false;
  };
  size_t max_lanes_ = 1, plans_per_lane_ = 8;
  int64_t reserved_arena_bytes_ = 0;
  std::vector<std::unique_ptr<Lane>> lanes_;
  std::condition_variable idle_;
};

}  // namespace kiln::runtime
