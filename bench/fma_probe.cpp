// Measures this machine's FP32 peak (GFLOP/s) with independent FMA chains, on 1 and 2 threads,
// and prints it as JSON for bench/run.sh. AVX-512 when the CPU has it, else AVX2 (run-time check);
// `--isa avx2` measures AVX2 even on an AVX-512 machine (the peak of Kiln capped at AVX2).
// Built by bench/setup.sh: g++ -O2 -march=native -fopenmp -ffp-contract=fast (see fma_chains).
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

namespace {

// Enough independent accumulators to cover FMA latency (4-5 cycles) times 2 FMA ports.
constexpr int kChains = 16;
constexpr long kIterations = 20'000'000;

typedef float Floats16 __attribute__((vector_size(64)));
typedef float Floats8 __attribute__((vector_size(32)));

// Runs `iterations` steps of kChains independent multiply-adds on Vec (a vector of floats) and
// returns a value derived from every accumulator, so the compiler cannot drop any chain. Inlined
// into the ISA-specific wrappers below, whose target attribute picks the instructions; `a * b + c`
// on vectors contracts to one FMA (-ffp-contract=fast, GNU C++'s default; objdump shows vfmadd).
template <typename Vec>
[[gnu::always_inline]] inline float fma_chains(long iterations) {
  constexpr int kLanes = sizeof(Vec) / sizeof(float);
  Vec acc[kChains];
  for (int c = 0; c < kChains; ++c) acc[c] = Vec{} + (1.0f + 1e-3f * c);
  const Vec mul = Vec{} + 0.999999f, add = Vec{} + 1e-7f;
  for (long i = 0; i < iterations; ++i)
#pragma GCC unroll 16
    for (int c = 0; c < kChains; ++c) acc[c] = acc[c] * mul + add;
  float sum = 0.0f;
  for (int c = 0; c < kChains; ++c)
    for (int lane = 0; lane < kLanes; ++lane) sum += acc[c][lane];
  return sum;
}

[[gnu::target("avx512f")]] float fma_chains_avx512(long iterations) { return fma_chains<Floats16>(iterations); }
[[gnu::target("avx2,fma")]] float fma_chains_avx2(long iterations) { return fma_chains<Floats8>(iterations); }

struct Isa {
  const char* name;
  int lanes;
  float (*kernel)(long);
};

Isa pick_isa(bool avx2_only) {
  __builtin_cpu_init();
  if (!avx2_only && __builtin_cpu_supports("avx512f")) return {"avx512", 16, fma_chains_avx512};
  return {"avx2", 8, fma_chains_avx2};
}

// Best of a few repetitions: every thread runs the kernel; GFLOP/s over the slowest thread's time.
double peak_gflops(const Isa& isa, int threads, volatile float* sink) {
  const double flops = 2.0 * isa.lanes * kChains * kIterations * threads;
  double best_seconds = 1e30;
  for (int repeat = 0; repeat < 3; ++repeat) {
    const auto start = std::chrono::steady_clock::now();
#pragma omp parallel num_threads(threads)
    sink[omp_get_thread_num()] = isa.kernel(kIterations);
    const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
    best_seconds = std::min(best_seconds, elapsed.count());
  }
  return flops / best_seconds / 1e9;
}

}  // namespace

int main(int argc, char** argv) {
  const bool avx2_only = argc == 3 && std::string(argv[1]) == "--isa" && std::string(argv[2]) == "avx2";
  if (argc > 1 && !avx2_only) {
    std::fprintf(stderr, "usage: fma_probe [--isa avx2]\n");
    return 2;
  }
  const Isa isa = pick_isa(avx2_only);
  std::vector<float> sink(64);
  isa.kernel(kIterations / 10);  // let the clock ramp up
  const double one = peak_gflops(isa, 1, sink.data());
  const double two = peak_gflops(isa, 2, sink.data());
  std::printf("{\"isa\": \"%s\", \"chains\": %d, \"peak_gflops\": {\"1\": %.1f, \"2\": %.1f}}\n", isa.name,
              kChains, one, two);
  return 0;
}
