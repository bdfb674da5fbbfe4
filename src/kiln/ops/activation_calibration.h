// Static int8 calibration: an activation's range chosen from its values over a calibration set, and
// the uint8 quantization (scale, zero point) that range gives, with ONNX QuantizeLinear's arithmetic.
// Three methods, as one table: min-max (the whole observed range), percentile (both tails beyond a
// percentile clipped) and entropy (the symmetric threshold whose 128-level quantization of the
// |x| histogram loses least information, Kullback-Leibler, as TensorRT and ONNX Runtime's entropy
// calibrator choose it). The statistics take two passes over the set: the range first, then (for
// percentile and entropy) a histogram over it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::ops {

enum class CalibrationMethod { kMinMax, kPercentile, kEntropy };

struct CalibrationMethodInfo {
  CalibrationMethod method;
  const char* name;         // as options and reports spell it
  const char* description;  // for help texts
  bool histogram;           // needs the second pass
};

const std::vector<CalibrationMethodInfo>& calibration_method_table();
const CalibrationMethodInfo& calibration_method_info(CalibrationMethod method);
std::optional<CalibrationMethod> parse_calibration_method(std::string_view name);
std::string calibration_method_names();  // "minmax, percentile, entropy"

// The percentile method's default: each tail beyond 99.99% of the values is clipped.
inline constexpr double kDefaultCalibrationPercentile = 99.99;

// A uint8 quantization as QuantizeLinear applies it: q = saturate(round(x / scale) + zero_point).
struct Uint8Quantization {
  float scale = 1;
  int32_t zero_point = 0;
};

// The uint8 range [0, 255] stretched over [min(low, 0), max(high, 0)], as DynamicQuantizeLinear
// computes it in float; a range of zeros (or NaN) gives scale 1, zero point 0.
Uint8Quantization uint8_quantization(float low, float high);

// One activation's values over the calibration runs.
class ActivationStatistics {
 public:
  static constexpr int kBins = 2048;
  // First pass: the range of finite values (NaN and infinities are left out).
  void observe_range(const float* values, int64_t count);
  // Second pass (after the first has seen every run): the histogram over that range (percentile)
  // or over [0, max |x|] (entropy).
  void observe_histogram(const float* values, int64_t count, CalibrationMethod method);
  bool seen() const { return low_ <= high_; }
  // The range `method` chooses (`percentile` for kPercentile, in (50, 100]).
  std::pair<float, float> range(CalibrationMethod method, double percentile = kDefaultCalibrationPercentile) const;

 private:
  std::pair<float, float> percentile_range(double percentile) const;
  float entropy_threshold() const;

  float low_ = 1, high_ = 0;  // empty until observed
  std::vector<double> histogram_;
  int64_t histogram_count_ = 0;
};

}  // namespace kiln::ops
