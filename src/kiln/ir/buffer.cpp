// Aligned raw storage (see buffer.h).
#include "kiln/ir/buffer.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstdlib>
#include <new>

namespace kiln {
namespace {

constexpr size_t kHugePage = size_t{2} << 20;

}  // namespace

std::shared_ptr<void> allocate_buffer(size_t bytes) {
  bytes = std::max<size_t>(bytes, 1);
  if (bytes < kHugePage) {
    void* p = ::operator new(bytes, std::align_val_t{64}, std::nothrow);
    if (!p) return nullptr;
    return std::shared_ptr<void>(p, [](void* q) { ::operator delete(q, std::align_val_t{64}); });
  }
  const size_t rounded = (bytes + kHugePage - 1) / kHugePage * kHugePage;
  void* p = std::aligned_alloc(kHugePage, rounded);
  if (!p) return nullptr;
  madvise(p, rounded, MADV_HUGEPAGE);  // advice only: without huge pages the buffer works the same
  return std::shared_ptr<void>(p, [](void* q) { std::free(q); });
}

}  // namespace kiln
