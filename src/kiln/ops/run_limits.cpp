// RunLimits (run_limits.h): one pointer per thread to the limits of the run it is executing.
#include "kiln/ops/run_limits.h"

namespace kiln::ops {

namespace {
thread_local const RunLimits* current_limits = nullptr;
}  // namespace

ScopedRunLimits::ScopedRunLimits(const RunLimits* limits) : previous_(current_limits), set_(limits != nullptr) {
  if (set_) current_limits = limits;
}

ScopedRunLimits::~ScopedRunLimits() {
  if (set_) current_limits = previous_;
}

namespace {

std::string what_was_next(const ir::Node& node, int64_t iteration) {
  return (iteration >= 0 ? "iteration " + std::to_string(iteration) + " of " : std::string()) + node.describe();
}

}  // namespace

Status check_run_limits(const ir::Node& node, int64_t iteration) {
  const RunLimits* limits = current_limits;
  if (!limits) return Status::ok();
  if (limits->terminate && limits->terminate->load(std::memory_order_relaxed))
    return cancelled("the run was terminated before " + what_was_next(node, iteration));
  if (limits->deadline && std::chrono::steady_clock::now() >= *limits->deadline) {
    std::string budget = std::to_string(limits->timeout_ms);
    budget.erase(budget.find_last_not_of('0') + 1);
    if (!budget.empty() && budget.back() == '.') budget.pop_back();
    return cancelled("the run's deadline (timeout " + budget + " ms) passed before " + what_was_next(node, iteration));
  }
  return Status::ok();
}

int64_t max_loop_iterations() { return current_limits ? current_limits->max_loop_iterations : 0; }

}  // namespace kiln::ops
