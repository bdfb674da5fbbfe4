// Static int8 calibration's statistics and methods (see activation_calibration.h).
#include "kiln/ops/activation_calibration.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "kiln/ops/quantization.h"

namespace kiln::ops {

const std::vector<CalibrationMethodInfo>& calibration_method_table() {
  static const std::vector<CalibrationMethodInfo> table = {
      {CalibrationMethod::kMinMax, "minmax", "the whole range of the calibration set's values", false},
      {CalibrationMethod::kPercentile, "percentile", "the range without each tail beyond the 99.99th percentile", true},
      {CalibrationMethod::kEntropy, "entropy", "the threshold whose int8 histogram keeps the most information (KL divergence)", true},
  };
  return table;
}

const CalibrationMethodInfo& calibration_method_info(CalibrationMethod method) {
  for (const CalibrationMethodInfo& info : calibration_method_table())
    if (info.method == method) return info;
  return calibration_method_table().front();
}

std::optional<CalibrationMethod> parse_calibration_method(std::string_view name) {
  for (const CalibrationMethodInfo& info : calibration_method_table())
    if (name == info.name) return info.method;
  return std::nullopt;
}

std::string calibration_method_names() {
  std::string names;
  for (const CalibrationMethodInfo& info : calibration_method_table()) names += (names.empty() ? "" : ", ") + std::string(info.name);
  return names;
}

Uint8Quantization uint8_quantization(float low, float high) {
  low = std::min(low, 0.0f);
  high = std::max(high, 0.0f);
  if (!(high > low)) return {};
  const DynamicQuantization q = dynamic_quantization(low, high);  // DynamicQuantizeLinear's own arithmetic
  return {q.scale, q.zero_point};
}

void ActivationStatistics::observe_range(const float* values, int64_t count) {
  float low = seen() ? low_ : std::numeric_limits<float>::infinity();
  float high = seen() ? high_ : -std::numeric_limits<float>::infinity();
  for (int64_t i = 0; i < count; ++i) {
    if (!std::isfinite(values[i])) continue;
    low = std::min(low, values[i]);
    high = std::max(high, values[i]);
  }
  if (low <= high) {
    low_ = low;
    high_ = high;
  }
}

void ActivationStatistics::observe_histogram(const float* values, int64_t count, CalibrationMethod method) {
  if (!seen()) return;
  histogram_.resize(kBins, 0.0);
  const bool magnitude = method == CalibrationMethod::kEntropy;
  const float origin = magnitude ? 0.0f : low_;
  const float width = (magnitude ? std::max(std::fabs(low_), std::fabs(high_)) : high_ - low_) / kBins;
  if (!(width > 0)) return;
  for (int64_t i = 0; i < count; ++i) {
    // Exact zeros (a ReLU's cut-off half) say nothing of the range and quantize exactly in any;
    // left in, their mass would decide the entropy threshold.
    if (!std::isfinite(values[i]) || (magnitude && values[i] == 0.0f)) continue;
    const float v = magnitude ? std::fabs(values[i]) : values[i];
    const auto bin = static_cast<int64_t>((v - origin) / width);
    histogram_[static_cast<size_t>(std::clamp<int64_t>(bin, 0, kBins - 1))] += 1;
    ++histogram_count_;
  }
}

std::pair<float, float> ActivationStatistics::range(CalibrationMethod method, double percentile) const {
  if (!seen()) return {0.0f, 0.0f};
  if (method == CalibrationMethod::kMinMax || histogram_count_ == 0) return {low_, high_};
  if (method == CalibrationMethod::kPercentile) return percentile_range(percentile);
  const float threshold = entropy_threshold();
  return {std::max(low_, -threshold), std::min(high_, threshold)};
}

std::pair<float, float> ActivationStatistics::percentile_range(double percentile) const {
  // Each tail holds at most (100 - percentile)% of the values; the range runs from the first bin's
  // lower edge past the lower tail to the last bin's upper edge before the upper one.
  const double tail = static_cast<double>(histogram_count_) * (100.0 - percentile) / 100.0;
  const float width = (high_ - low_) / kBins;
  int first = 0, last = kBins - 1;
  for (double below = 0; first < kBins - 1 && below + histogram_[static_cast<size_t>(first)] <= tail; ++first)
    below += histogram_[static_cast<size_t>(first)];
  for (double above = 0; last > first && above + histogram_[static_cast<size_t>(last)] <= tail; --last)
    above += histogram_[static_cast<size_t>(last)];
  return {first == 0 ? low_ : low_ + width * static_cast<float>(first), last == kBins - 1 ? high_ : low_ + width * static_cast<float>(last + 1)};
}

float ActivationStatistics::entropy_threshold() const {
  // For each candidate threshold (the upper edge of bin i - 1), the reference distribution P is the
  // histogram up to it with everything beyond folded into its last bin; Q is the histogram up to it
  // (without what is beyond: the clipped mass is what Q loses) quantized to kLevels levels, each
  // level's mass spread evenly over the bins that hold values. The threshold of least KL(P || Q)
  // is chosen.
  constexpr int kLevels = 128;
  constexpr int kStride = 4;
  constexpr double kEmptyShare = 1e-4;
  const float magnitude = std::max(std::fabs(low_), std::fabs(high_));
  const auto h = [&](int b) { return histogram_[static_cast<size_t>(b)]; };
  std::vector<double> q(kBins);
  double best_divergence = std::numeric_limits<double>::infinity();
  int best = kBins;
  double beyond = 0, within = 0;
  for (int b = kLevels; b < kBins; ++b) beyond += h(b);
  for (int b = 0; b < kLevels; ++b) within += h(b);
  for (int i = kLevels; i <= kBins; i += kStride) {
    for (int level = 0; level < kLevels; ++level) {
      const int begin = level * i / kLevels, end = (level + 1) * i / kLevels;
      double mass = 0;
      int occupied = 0;
      for (int b = begin; b < end; ++b) {
        mass += h(b);
        occupied += h(b) > 0;
      }
      for (int b = begin; b < end; ++b) q[static_cast<size_t>(b)] = h(b) > 0 ? mass / occupied : 0.0;
    }
    // P sums to within + beyond, Q to within.
    const double p_total = within + beyond;
    double divergence = 0;
    for (int b = 0; b < i; ++b) {
      const double p = h(b) + (b == i - 1 ? beyond : 0.0);
      if (p <= 0) continue;
      // A bin Q has nothing in (P's last, holding only the clipped values) takes a small share
      // instead of zero, so that clipping costs much rather than infinitely much.
      const double qb = q[static_cast<size_t>(b)] > 0 ? q[static_cast<size_t>(b)] / within : kEmptyShare;
      divergence += p / p_total * std::log((p / p_total) / qb);
    }
    if (divergence < best_divergence) {
      best_divergence = divergence;
      best = i;
    }
    for (int b = i; b < std::min(i + kStride, kBins); ++b) {
      beyond -= h(b);
      within += h(b);
    }
  }
  return magnitude * static_cast<float>(best) / kBins;
}

}  // namespace kiln::ops
