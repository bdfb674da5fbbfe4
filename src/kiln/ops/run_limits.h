// RunLimits: what bounds the run in progress on this thread: cancellation (RunOptions::terminate),
// a deadline (RunOptions::timeout_ms) and the most iterations a Loop may run
// (SessionOptions::max_loop_iterations). The executor makes them current for a run (ScopedRunLimits)
// and checks them before each step; Loop and Scan check them before each iteration, also inside
// bodies run by nested executors on the same thread. Without current limits nothing is checked.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "kiln/ir/graph.h"
#include "kiln/status.h"

namespace kiln::ops {

struct RunLimits {
  const std::atomic<bool>* terminate = nullptr;
  std::optional<std::chrono::steady_clock::time_point> deadline;
  double timeout_ms = 0;            // the deadline's budget, for messages
  int64_t max_loop_iterations = 0;  // 0: unbounded
};

// Makes `limits` current on this thread for its lifetime (null: leaves the current ones).
class ScopedRunLimits {
 public:
  explicit ScopedRunLimits(const RunLimits* limits);
  ~ScopedRunLimits();
  ScopedRunLimits(const ScopedRunLimits&) = delete;
  ScopedRunLimits& operator=(const ScopedRunLimits&) = delete;

 private:
  const RunLimits* previous_;
  bool set_;
};

// Cancelled when the current run was terminated or its deadline has passed, naming `node` (about
// to run) and, for a Loop or Scan, the `iteration` about to start (-1: none); OK otherwise.
Status check_run_limits(const ir::Node& node, int64_t iteration = -1);
// The current run's bound on a Loop's iterations (0: none).
int64_t max_loop_iterations();

}  // namespace kiln::ops
