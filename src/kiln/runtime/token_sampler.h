// Picks the next token from a row of logits: greedy (the first of the largest) at temperature 0,
// else a draw from the softmax at that temperature over the top-k tokens, cut to the smallest set
// whose probability reaches top-p, from a seeded generator (one seed, one sequence).
#pragma once

#include <cstdint>
#include <random>

#include "kiln/generator.h"

namespace kiln::runtime {

class TokenSampler {
 public:
  explicit TokenSampler(const SamplingOptions& options) : options_(options), random_(options.seed) {}
  int32_t sample(const float* logits, int64_t vocab);

 private:
  SamplingOptions options_;
  std::mt19937_64 random_;
};

}  // namespace kiln::runtime
