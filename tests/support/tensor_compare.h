// How far apart two float tensors of one shape are, for tests that hold a reduced or rewritten
// computation to a reference: max |a - b| / max |b|.
#pragma once

#include <algorithm>
#include <cmath>

#include "kiln/tensor.h"

namespace kiln::testing {

inline double relative_difference(const Tensor& a, const Tensor& b) {
  double largest = 0, worst = 0;
  for (int64_t i = 0; i < b.element_count(); ++i) {
    largest = std::max(largest, std::fabs(double(b.data<float>()[i])));
    worst = std::max(worst, std::fabs(double(a.data<float>()[i]) - b.data<float>()[i]));
  }
  return worst / largest;
}

}  // namespace kiln::testing
