// Tests of static int8 calibration's arithmetic: the uint8 quantization of a range as ONNX's
// DynamicQuantizeLinear computes it, and each method's range on values with known outliers.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "kiln/ops/activation_calibration.h"

namespace kiln::ops {
namespace {

TEST(ActivationCalibration, Uint8QuantizationStretchesTheRangeWithZeroOverItsSteps) {
  const Uint8Quantization q = uint8_quantization(-1.0f, 3.0f);
  EXPECT_FLOAT_EQ(q.scale, 4.0f / 255.0f);
  EXPECT_EQ(q.zero_point, 64);  // round(1 / (4 / 255)) = round(63.75)
  const Uint8Quantization positive = uint8_quantization(2.0f, 5.0f);  // 0 joins the range
  EXPECT_FLOAT_EQ(positive.scale, 5.0f / 255.0f);
  EXPECT_EQ(positive.zero_point, 0);
  EXPECT_EQ(uint8_quantization(-2.0f, -1.0f).zero_point, 255);
  const Uint8Quantization zeros = uint8_quantization(0.0f, 0.0f);
  EXPECT_EQ(zeros.scale, 1.0f);
  EXPECT_EQ(zeros.zero_point, 0);
}

// 100000 values of a standard normal, and one outlier at 1000.
std::vector<float> normal_with_outlier() {
  std::mt19937 random(7);
  std::normal_distribution<float> normal;
  std::vector<float> v(100000);
  for (float& x : v) x = normal(random);
  v.push_back(1000.0f);
  v.push_back(std::numeric_limits<float>::quiet_NaN());  // left out
  return v;
}

ActivationStatistics observed(const std::vector<float>& v, CalibrationMethod method) {
  ActivationStatistics s;
  // Two runs' worth: the range first over both halves, then the histogram.
  const int64_t half = static_cast<int64_t>(v.size()) / 2;
  s.observe_range(v.data(), half);
  s.observe_range(v.data() + half, static_cast<int64_t>(v.size()) - half);
  if (calibration_method_info(method).histogram) {
    s.observe_histogram(v.data(), half, method);
    s.observe_histogram(v.data() + half, static_cast<int64_t>(v.size()) - half, method);
  }
  return s;
}

TEST(ActivationCalibration, MinMaxKeepsEveryFiniteValue) {
  const std::vector<float> v = normal_with_outlier();
  const auto [low, high] = observed(v, CalibrationMethod::kMinMax).range(CalibrationMethod::kMinMax);
  EXPECT_EQ(high, 1000.0f);
  EXPECT_LT(low, -3.0f);
  EXPECT_GT(low, -6.0f);
}

TEST(ActivationCalibration, PercentileClipsEachTail) {
  const std::vector<float> v = normal_with_outlier();
  // The histogram's bins are 1006 / 2048 wide: the 99.99th percentile of a normal (3.7) rounds up
  // to a bin's edge.
  const auto [low, high] = observed(v, CalibrationMethod::kPercentile).range(CalibrationMethod::kPercentile, 99.99);
  EXPECT_LT(high, 5.0f);
  EXPECT_GT(high, 3.0f);
  EXPECT_LT(low, -3.0f);
  EXPECT_GT(low, -5.0f);
  // 100 keeps everything.
  EXPECT_EQ(observed(v, CalibrationMethod::kPercentile).range(CalibrationMethod::kPercentile, 100.0).second, 1000.0f);
}

TEST(ActivationCalibration, EntropyChoosesAThresholdBelowARareOutlier) {
  const std::vector<float> v = normal_with_outlier();
  const auto [low, high] = observed(v, CalibrationMethod::kEntropy).range(CalibrationMethod::kEntropy);
  EXPECT_LT(high, 1000.0f / 2) << "one value in 100001 does not stretch the range";
  EXPECT_GT(high, 2.0f) << "the bulk of the values stays inside";
  // The threshold is symmetric; the observed minimum (above -threshold) bounds the low end.
  EXPECT_EQ(low, observed(v, CalibrationMethod::kMinMax).range(CalibrationMethod::kMinMax).first);
}

TEST(ActivationCalibration, MethodsAreOneTable) {
  for (const CalibrationMethodInfo& info : calibration_method_table())
    EXPECT_EQ(parse_calibration_method(info.name), info.method) << info.name;
  EXPECT_FALSE(parse_calibration_method("median"));
  EXPECT_EQ(calibration_method_names(), "minmax, percentile, entropy");
}

TEST(ActivationCalibration, NothingObservedIsAZeroRange) {
  ActivationStatistics s;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  s.observe_range(&nan, 1);
  EXPECT_FALSE(s.seen());
  EXPECT_EQ(s.range(CalibrationMethod::kMinMax), std::make_pair(0.0f, 0.0f));
}

}  // namespace
}  // namespace kiln::ops
