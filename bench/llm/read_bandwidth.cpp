// Measures this machine's memory read bandwidth (GB/s) on 1 and 2 threads, as decoding one token
// reads the weights: a 1 GiB array, far beyond the caches, summed with 256-bit loads, best of 5
// passes; prints JSON for bench/llm.sh. Built there: g++ -O2 -mavx2 -fopenmp.
#include <immintrin.h>
#include <omp.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>

int main() {
  const size_t bytes = size_t{1} << 30, floats = bytes / sizeof(float);
  float* data = static_cast<float*>(std::aligned_alloc(64, bytes));
  std::memset(data, 1, bytes);
  std::printf("{");
  for (int threads : {1, 2}) {
    double best = 0;
    float sink = 0;
    for (int pass = 0; pass < 5; ++pass) {
      const auto start = std::chrono::steady_clock::now();
      float total = 0;
#pragma omp parallel for num_threads(threads) reduction(+ : total) schedule(static)
      for (long chunk = 0; chunk < static_cast<long>(floats / 64); ++chunk) {
        const float* p = data + chunk * 64;
        __m256 a = _mm256_load_ps(p), b = _mm256_load_ps(p + 8), c = _mm256_load_ps(p + 16), d = _mm256_load_ps(p + 24);
        a = _mm256_add_ps(a, _mm256_load_ps(p + 32));
        b = _mm256_add_ps(b, _mm256_load_ps(p + 40));
        c = _mm256_add_ps(c, _mm256_load_ps(p + 48));
        d = _mm256_add_ps(d, _mm256_load_ps(p + 56));
        const __m256 s = _mm256_add_ps(_mm256_add_ps(a, b), _mm256_add_ps(c, d));
        float lanes[8];
        _mm256_storeu_ps(lanes, s);
        total += lanes[0];
      }
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (bytes / seconds / 1e9 > best) best = bytes / seconds / 1e9;
      sink += total;
    }
    std::printf("%s\"read_gb_per_s_%d_threads\": %.2f", threads == 1 ? "" : ", ", threads, best + (sink == 12345.0f ? 1e-9 : 0.0));
  }
  std::printf("}\n");
  std::free(data);
  return 0;
}
