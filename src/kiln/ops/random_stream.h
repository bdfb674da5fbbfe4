// RandomStream: the random numbers every random op draws from. It is the 32-bit Mersenne Twister
// with NumPy's legacy double and Gaussian recipes, so a node with `seed` s draws exactly what
// `numpy.random.seed(s); numpy.random.uniform(...)` draws (the ONNX test data's references for
// seeded ops). Values are the same with every standard library: only std::mt19937's raw output,
// which the C++ standard pins down, is used.
#pragma once

#include <cstdint>
#include <random>

#include "kiln/ir/graph.h"

namespace kiln::ops {

class RandomStream {
 public:
  // Seeded from the node's `seed` attribute (int or float); without one, each stream made in this
  // process is the next of a process-wide sequence, so a process's runs differ but are reproducible.
  explicit RandomStream(const ir::Node& node);
  explicit RandomStream(uint32_t seed) : engine_(seed) {}

  // Uniform in [0, 1) with 53 random bits (NumPy's random_sample).
  double uniform();
  // Standard normal by the polar method, second value cached (NumPy's legacy gauss).
  double normal();

 private:
  std::mt19937 engine_;
  bool has_cached_normal_ = false;
  double cached_normal_ = 0.0;
};

}  // namespace kiln::ops
