// Aligned raw storage for tensors, the execution arena and prepacked weights. The whole 2 MiB
// pages of large buffers are backed by transparent huge pages where the OS offers them (madvise):
// a model's weights stream from memory on every run, and with 4 KiB pages that costs a TLB miss
// per page and stops the hardware prefetchers at every page boundary.
#pragma once

#include <cstddef>
#include <memory>

namespace kiln {

// `bytes` (at least 1) of uninitialised storage, 64-byte aligned (2 MiB-aligned and huge-page
// advised when large); null when the allocation fails.
std::shared_ptr<void> allocate_buffer(size_t bytes);

}  // namespace kiln
