// Next-token sampling (token_sampler.h).
#include "kiln/runtime/token_sampler.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

namespace kiln::runtime {

int32_t TokenSampler::sample(const float* logits, int64_t vocab) {
  if (options_.temperature <= 0) return static_cast<int32_t>(std::max_element(logits, logits + vocab) - logits);
  std::vector<int32_t> order(static_cast<size_t>(vocab));
  std::iota(order.begin(), order.end(), 0);
  const size_t keep = options_.top_k > 0 ? static_cast<size_t>(std::min(options_.top_k, vocab)) : order.size();
  std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(keep), order.end(),
                    [&](int32_t a, int32_t b) { return logits[a] > logits[b] || (logits[a] == logits[b] && a < b); });
  order.resize(keep);
  // Softmax at the temperature over the kept tokens, largest first.
  std::vector<double> probability(order.size());
  const double top = logits[order.front()];
  double sum = 0;
  for (size_t i = 0; i < order.size(); ++i) sum += probability[i] = std::exp((logits[order[i]] - top) / options_.temperature);
  size_t count = order.size();
  double mass = 0;
  for (size_t i = 0; i < order.size(); ++i) {
    mass += probability[i] / sum;
    if (mass >= options_.top_p) {
      count = i + 1;
      break;
    }
  }
  const double total = std::accumulate(probability.begin(), probability.begin() + static_cast<std::ptrdiff_t>(count), 0.0);
  double draw = std::uniform_real_distribution<double>(0.0, total)(random_);
  for (size_t i = 0; i < count; ++i) {
    draw -= probability[i];
    if (draw < 0) return order[i];
  }
  return order[count - 1];
}

}  // namespace kiln::runtime
