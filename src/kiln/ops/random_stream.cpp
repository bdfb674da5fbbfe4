// RandomStream: NumPy-compatible uniform and normal draws from a seeded Mersenne Twister.
#include "kiln/ops/random_stream.h"

#include <atomic>
#include <bit>
#include <cmath>

namespace kiln::ops {
namespace {

uint32_t mix32(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return static_cast<uint32_t>(x ^ (x >> 31));
}

// A whole seed in [0, 2^32) is used as is (as numpy.random.seed does); any other value is hashed.
uint32_t seed_from_number(double seed) {
  if (seed >= 0.0 && seed < 4294967296.0 && std::floor(seed) == seed) return static_cast<uint32_t>(seed);
  return mix32(std::bit_cast<uint64_t>(seed));
}

uint32_t seed_for(const ir::Node& node) {
  if (const ir::Attribute* seed = node.attr("seed")) {
    if (seed->kind == ir::Attribute::Kind::kInt) return seed_from_number(static_cast<double>(seed->i));
    if (seed->kind == ir::Attribute::Kind::kFloat) return seed_from_number(seed->f);
  }
  static std::atomic<uint64_t> next_stream{0};
  return mix32(0x6B696C6E00000000ull + next_stream.fetch_add(1));
}

}  // namespace

RandomStream::RandomStream(const ir::Node& node) : engine_(seed_for(node)) {}

double RandomStream::uniform() {
  const uint32_t high = engine_() >> 5, low = engine_() >> 6;
  return (high * 67108864.0 + low) / 9007199254740992.0;
}

double RandomStream::normal() {
  if (has_cached_normal_) {
    has_cached_normal_ = false;
    return cached_normal_;
  }
  double x1, x2, r2;
  do {
    x1 = 2.0 * uniform() - 1.0;
    x2 = 2.0 * uniform() - 1.0;
    r2 = x1 * x1 + x2 * x2;
  } while (r2 >= 1.0 || r2 == 0.0);
  const double f = std::sqrt(-2.0 * std::log(r2) / r2);
  cached_normal_ = f * x1;
  has_cached_normal_ = true;
  return f * x2;
}

}  // namespace kiln::ops
