// ScopedThreads: OpenMP's thread count for the calling thread set while it lives (for work too
// small to pay for waking threads: a kernel built on the calling thread, a recurrent layer's
// per-step products).
#pragma once

#include <omp.h>

namespace kiln::providers::cpu {

class ScopedThreads {
 public:
  explicit ScopedThreads(int threads) : previous_(omp_get_max_threads()) { omp_set_num_threads(threads); }
  ~ScopedThreads() { omp_set_num_threads(previous_); }
  ScopedThreads(const ScopedThreads&) = delete;
  ScopedThreads& operator=(const ScopedThreads&) = delete;

 private:
  int previous_;
};

}  // namespace kiln::providers::cpu
