// How the one-token products of the cpu provider (block_quantized_matmul_kernels.cpp,
// block_quantized_rows_avx512.cpp) spread a weight's rows over the threads: each OpenMP thread
// takes a contiguous share and reads it as kRowStreams parts side by side, row i of every part
// together. A core with one stream of reads in flight leaves memory bandwidth unused (the hardware
// prefetcher follows one stream per page); several far-apart streams, each sequential, keep more
// requests in flight. On a 2-core Zen 4, Q4_0 rows of 2048: 26 GB/s with one stream per thread,
// 35 with four, where one sequential read per thread measures 31.
#pragma once

#include <omp.h>

#include <cstdint>

namespace kiln::providers::cpu {

inline constexpr int kRowStreams = 4;

// Calls streams(first, stride) for the rows first + r stride (r < kRowStreams) of each thread's
// share, then row(n) for the rows its parts leave over.
template <class Streams, class Row>
void for_row_streams(int64_t n_rows, const Streams& streams, const Row& row) {
#pragma omp parallel
  {
    const int64_t threads = omp_get_num_threads(), t = omp_get_thread_num();
    const int64_t begin = n_rows * t / threads, end = n_rows * (t + 1) / threads, part = (end - begin) / kRowStreams;
    for (int64_t i = 0; i < part; ++i) streams(begin + i, part);
    for (int64_t n = begin + kRowStreams * part; n < end; ++n) row(n);
  }
}

}  // namespace kiln::providers::cpu
