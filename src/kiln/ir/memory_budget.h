// A session's memory budget: the bytes its buffers hold at once (weights, packed copies, arenas,
// outputs, values allocated while running), counted against an optional limit. Every buffer made
// by allocate_buffer (buffer.h) on a thread where a budget is current is charged to it, and
// credited back when the buffer is freed (the buffer keeps the budget alive). A charge that would
// pass the limit is refused: the allocation fails before any memory is taken.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <new>
#include <string>

#include "kiln/status.h"

namespace kiln {

class MemoryBudget {
 public:
  // `limit_bytes` 0: no limit (use is still counted).
  explicit MemoryBudget(int64_t limit_bytes = 0) : limit_(limit_bytes) {}
  int64_t limit() const { return limit_; }
  int64_t in_use() const { return in_use_.load(std::memory_order_relaxed); }
  int64_t peak() const { return peak_.load(std::memory_order_relaxed); }
  // The bytes that may still be charged (INT64_MAX without a limit).
  int64_t available() const;
  // Charges `bytes` when they fit under the limit; false (nothing charged) when they do not.
  bool charge(int64_t bytes);
  void credit(int64_t bytes);
  // "memory limit L bytes, U in use (peak P)", for messages.
  std::string describe() const;

 private:
  const int64_t limit_;
  std::atomic<int64_t> in_use_{0};
  std::atomic<int64_t> peak_{0};
};

// The budget allocate_buffer charges on this thread: null when none.
const std::shared_ptr<MemoryBudget>& current_memory_budget();

// Makes `budget` the calling thread's current one for the scope's life (the previous one after).
class MemoryBudgetScope {
 public:
  explicit MemoryBudgetScope(std::shared_ptr<MemoryBudget> budget);
  ~MemoryBudgetScope();
  MemoryBudgetScope(const MemoryBudgetScope&) = delete;
  MemoryBudgetScope& operator=(const MemoryBudgetScope&) = delete;

 private:
  std::shared_ptr<MemoryBudget> previous_;
};

// `status` with the budget's state appended when it is an AllocationFailure under a limit.
Status annotate_allocation_failure(const Status& status, const MemoryBudget& budget);

// `work()` (giving a Status or a Result), with a std::bad_alloc thrown inside it turned into an
// AllocationFailure naming `what`: for the library's entry points (load, run, a stream's call).
template <class Work>
auto catching_bad_alloc(const char* what, Work&& work) -> decltype(work()) {
  try {
    return work();
  } catch (const std::bad_alloc&) {
    return allocation_failure(std::string("out of memory while ") + what);
  }
}

// `bytes` as "N bytes (X MiB)" for messages.
std::string describe_bytes(int64_t bytes);

}  // namespace kiln
