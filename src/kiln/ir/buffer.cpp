// Aligned raw storage (see buffer.h).
#include "kiln/ir/buffer.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstdlib>
#include <new>

#include "kiln/ir/memory_budget.h"

namespace kiln {
namespace {

constexpr size_t kHugePage = size_t{2} << 20;

}  // namespace

std::shared_ptr<void> allocate_buffer(size_t bytes, Paging paging) {
  bytes = std::max<size_t>(bytes, 1);
  std::shared_ptr<MemoryBudget> budget = current_memory_budget();
  const auto charged = static_cast<int64_t>(bytes);
  if (budget && (bytes > size_t{1} << 62 || !budget->charge(charged))) return nullptr;
  void* p = nullptr;
  const bool huge = bytes >= kHugePage && paging == Paging::kHugePages;
  if (!huge) {
    p = ::operator new(bytes, std::align_val_t{64}, std::nothrow);
  } else if (posix_memalign(&p, kHugePage, bytes) == 0) {
    // Advice only (without huge pages the buffer works the same), and for whole huge pages only: a
    // huge page over the tail would be resident in full for the few bytes the buffer uses of it.
    madvise(p, bytes / kHugePage * kHugePage, MADV_HUGEPAGE);
  } else {
    p = nullptr;
  }
  if (!p) {
    if (budget) budget->credit(charged);
    return nullptr;
  }
  auto release = [huge, budget, charged](void* q) {
    if (huge)
      std::free(q);
    else
      ::operator delete(q, std::align_val_t{64});
    if (budget) budget->credit(charged);
  };
  try {
    return std::shared_ptr<void>(p, release);
  } catch (const std::bad_alloc&) {  // the control block: the deleter has freed `p`
    return nullptr;
  }
}

std::shared_ptr<void> allocate_zeroed_buffer(size_t bytes) {
  bytes = std::max<size_t>(bytes, 1);
  std::shared_ptr<MemoryBudget> budget = current_memory_budget();
  const auto charged = static_cast<int64_t>(bytes);
  if (budget && (bytes > size_t{1} << 62 || !budget->charge(charged))) return nullptr;
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    if (budget) budget->credit(charged);
    return nullptr;
  }
  auto release = [bytes, budget, charged](void* q) {
    munmap(q, bytes);
    if (budget) budget->credit(charged);
  };
  try {
    return std::shared_ptr<void>(p, release);
  } catch (const std::bad_alloc&) {  // the control block: the deleter has unmapped `p`
    return nullptr;
  }
}

}  // namespace kiln
