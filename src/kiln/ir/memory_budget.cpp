// A session's memory budget (see memory_budget.h).
#include "kiln/ir/memory_budget.h"

#include <cstdio>
#include <limits>

namespace kiln {
namespace {

thread_local std::shared_ptr<MemoryBudget> g_current_budget;

}  // namespace

int64_t MemoryBudget::available() const {
  if (limit_ <= 0) return std::numeric_limits<int64_t>::max();
  const int64_t used = in_use();
  return used >= limit_ ? 0 : limit_ - used;
}

bool MemoryBudget::charge(int64_t bytes) {
  int64_t used = in_use_.load(std::memory_order_relaxed);
  for (;;) {
    if (limit_ > 0 && (bytes > limit_ || used > limit_ - bytes)) return false;
    if (in_use_.compare_exchange_weak(used, used + bytes, std::memory_order_relaxed)) break;
  }
  const int64_t now = used + bytes;
  int64_t peak = peak_.load(std::memory_order_relaxed);
  while (now > peak && !peak_.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
  }
  return true;
}

void MemoryBudget::credit(int64_t bytes) { in_use_.fetch_sub(bytes, std::memory_order_relaxed); }

std::string MemoryBudget::describe() const {
  return "memory limit " + (limit_ > 0 ? describe_bytes(limit_) : std::string("none")) + ", " + describe_bytes(in_use()) +
         " in use (peak " + describe_bytes(peak()) + ")";
}

const std::shared_ptr<MemoryBudget>& current_memory_budget() { return g_current_budget; }

MemoryBudgetScope::MemoryBudgetScope(std::shared_ptr<MemoryBudget> budget) : previous_(std::move(g_current_budget)) {
  g_current_budget = std::move(budget);
}

MemoryBudgetScope::~MemoryBudgetScope() { g_current_budget = std::move(previous_); }

Status annotate_allocation_failure(const Status& status, const MemoryBudget& budget) {
  if (status.code() != StatusCode::kAllocationFailure || budget.limit() <= 0 ||
      status.message().find("memory limit") != std::string::npos)
    return status;
  return Status(status.code(), status.message() + " (" + budget.describe() + ")");
}

std::string describe_bytes(int64_t bytes) {
  char mib[32];
  std::snprintf(mib, sizeof mib, "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
  return std::to_string(bytes) + " bytes (" + mib + ")";
}

}  // namespace kiln
