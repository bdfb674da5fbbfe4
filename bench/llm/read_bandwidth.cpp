// Measures this machine's memory read bandwidth (GB/s) on 1 and 2 threads, as decoding one token
// reads the weights: a 1 GiB array, far beyond the caches, summed with 256-bit loads, each thread
// reading its share as one sequential stream and as 4 far-apart streams side by side (as Kiln's
// one-token products do, providers/cpu/row_streams.h: more reads in flight), the best of 5 passes
// of either; prints JSON for bench/llm.sh. Built there: g++ -O2 -mavx2 -fopenmp.
#include <immintrin.h>
#include <omp.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>

namespace {

// The sum of 256 bytes at p (8 loads).
inline __m256 sum_chunk(const float* p) {
  __m256 a = _mm256_load_ps(p), b = _mm256_load_ps(p + 8), c = _mm256_load_ps(p + 16), d = _mm256_load_ps(p + 24);
  a = _mm256_add_ps(a, _mm256_load_ps(p + 32));
  b = _mm256_add_ps(b, _mm256_load_ps(p + 40));
  c = _mm256_add_ps(c, _mm256_load_ps(p + 48));
  d = _mm256_add_ps(d, _mm256_load_ps(p + 56));
  return _mm256_add_ps(_mm256_add_ps(a, b), _mm256_add_ps(c, d));
}

// Seconds to read `chunks` chunks of 64 floats on `threads` threads, each thread's share in
// `streams` parts read side by side; the sum goes to `sink`.
double read_pass(const float* data, long chunks, int threads, int streams, float& sink) {
  const auto start = std::chrono::steady_clock::now();
  float total = 0;
#pragma omp parallel num_threads(threads) reduction(+ : total)
  {
    const long t = omp_get_thread_num(), begin = chunks * t / threads, end = chunks * (t + 1) / threads, part = (end - begin) / streams;
    __m256 s = _mm256_setzero_ps();
    for (long i = 0; i < part; ++i)
      for (int r = 0; r < streams; ++r) s = _mm256_add_ps(s, sum_chunk(data + (begin + r * part + i) * 64));
    for (long c = begin + streams * part; c < end; ++c) s = _mm256_add_ps(s, sum_chunk(data + c * 64));
    float lanes[8];
    _mm256_storeu_ps(lanes, s);
    total += lanes[0];
  }
  sink += total;
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

int main() {
  const size_t bytes = size_t{1} << 30, floats = bytes / sizeof(float);
  float* data = static_cast<float*>(std::aligned_alloc(64, bytes));
  std::memset(data, 1, bytes);
  std::printf("{");
  for (int threads : {1, 2}) {
    double best = 0;
    float sink = 0;
    for (int pass = 0; pass < 5; ++pass)
      for (int streams : {1, 4}) {
        const double seconds = read_pass(data, static_cast<long>(floats / 64), threads, streams, sink);
        if (bytes / seconds / 1e9 > best) best = bytes / seconds / 1e9;
      }
    std::printf("%s\"read_gb_per_s_%d_threads\": %.2f", threads == 1 ? "" : ", ", threads, best + (sink == 12345.0f ? 1e-9 : 0.0));
  }
  std::printf("}\n");
  std::free(data);
  return 0;
}
