// Aligned raw storage for tensors, the execution arena and prepacked weights. The whole 2 MiB
// pages of large buffers are backed by transparent huge pages where the OS offers them (madvise):
// a model's weights stream from memory on every run, and with 4 KiB pages that costs a TLB miss
// per page and stops the hardware prefetchers at every page boundary.
#pragma once

#include <cstddef>
#include <memory>

namespace kiln {

// How a large buffer is paged. Huge pages suit buffers that every run reads or writes (the arena,
// packed weights); a model's weights as imported are written once, and the first touch of fresh
// huge pages costs far more than that of base pages on virtual machines (the host backs every huge
// page in full, zeroed: ~0.6 s of the BERT encoder's 1.6 s load).
enum class Paging { kHugePages, kBasePages };

// `bytes` (at least 1) of uninitialised storage, 64-byte aligned (2 MiB-aligned and huge-page
// advised when large and `paging` asks for it), charged to the thread's current memory budget
// (memory_budget.h) until freed; null when the allocation fails or the budget refuses it.
std::shared_ptr<void> allocate_buffer(size_t bytes, Paging paging = Paging::kHugePages);

// `bytes` (at least 1) of zeros in fresh base pages of the OS (an anonymous mapping, page-aligned):
// a page costs nothing until first written, so a buffer filled a little at a time (a key/value
// cache) becomes resident as it fills (huge pages would be zeroed and made resident 2 MiB at a
// time). Charged to the budget as allocate_buffer; null when the mapping fails or the budget
// refuses it.
std::shared_ptr<void> allocate_zeroed_buffer(size_t bytes);

}  // namespace kiln
