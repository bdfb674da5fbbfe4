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

std::shared_ptr<void> allocate_buffer(size_t bytes, Paging paging) {
  bytes = std::max<size_t>(bytes, 1);
  if (bytes < kHugePage || paging == Paging::kBasePages) {
    void* p = ::operator new(bytes, std::align_val_t{64}, std::nothrow);
    if (!p) return nullptr;
    return std::shared_ptr<void>(p, [](void* q) { ::operator delete(q, std::align_val_t{64}); });
  }
  void* p = nullptr;
  if (posix_memalign(&p, kHugePage, bytes) != 0) return nullptr;
  // Advice only (without huge pages the buffer works the same), and for whole huge pages only: a
  // huge page over the tail would be resident in full for the few bytes the buffer uses of it.
  madvise(p, bytes / kHugePage * kHugePage, MADV_HUGEPAGE);
  return std::shared_ptr<void>(p, [](void* q) { std::free(q); });
}

}  // namespace kiln
