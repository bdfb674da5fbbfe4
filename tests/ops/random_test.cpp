// Tests of the random ops: shapes, dtypes, reproducibility with a seed, and statistics of large
// seeded samples (mean and variance within several standard errors of the distribution's).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "ops/rule_harness.h"

namespace kiln::ops {
namespace {

using namespace testing;

constexpr int64_t kSamples = 20000;

ir::Attribute seed(float v) { return ir::Attribute::of_float(v); }
ir::Attribute real(float v) { return ir::Attribute::of_float(v); }

struct Moments {
  double mean = 0, variance = 0, min = INFINITY, max = -INFINITY;
};

Moments moments(const Tensor& t) {
  Moments m;
  const int64_t n = t.element_count();
  for (int64_t i = 0; i < n; ++i) {
    const double v = element_as_double(t, i);
    m.mean += v / static_cast<double>(n);
    m.min = std::min(m.min, v);
    m.max = std::max(m.max, v);
  }
  for (int64_t i = 0; i < n; ++i) m.variance += std::pow(element_as_double(t, i) - m.mean, 2) / static_cast<double>(n);
  return m;
}

bool same_values(const Tensor& a, const Tensor& b) {
  if (a.element_count() != b.element_count()) return false;
  for (int64_t i = 0; i < a.element_count(); ++i)
    if (element_as_double(a, i) != element_as_double(b, i)) return false;
  return true;
}

TEST(Random, UniformRangeMomentsAndSeed) {
  const Attrs attrs{{"shape", ints({100, kSamples / 100})}, {"low", real(-2)}, {"high", real(3)}, {"seed", seed(5)}};
  Tensor y = eval("RandomUniform", {}, attrs, 1)[0];
  EXPECT_EQ(y.dtype(), DType::kFloat);
  EXPECT_EQ(y.shape(), (std::vector<int64_t>{100, kSamples / 100}));
  const Moments m = moments(y);
  EXPECT_GE(m.min, -2.0);
  EXPECT_LT(m.max, 3.0);
  EXPECT_NEAR(m.mean, 0.5, 0.06);             // U(-2, 3): mean 0.5, standard error 0.010
  EXPECT_NEAR(m.variance, 25.0 / 12.0, 0.1);  // variance 25/12
  EXPECT_TRUE(same_values(y, eval("RandomUniform", {}, attrs, 1)[0]));
  Attrs other = attrs;
  other["seed"] = seed(6);
  EXPECT_FALSE(same_values(y, eval("RandomUniform", {}, other, 1)[0]));
}

TEST(Random, NormalMomentsInDouble) {
  const Attrs attrs{{"shape", ints({kSamples})}, {"mean", real(1)}, {"scale", real(2)}, {"seed", seed(1)},
                    {"dtype", int_attr(static_cast<int64_t>(DType::kDouble))}};
  Tensor y = eval("RandomNormal", {}, attrs, 1)[0];
  EXPECT_EQ(y.dtype(), DType::kDouble);
  const Moments m = moments(y);
  EXPECT_NEAR(m.mean, 1.0, 0.1);      // standard error 2 / sqrt(20000) = 0.014
  EXPECT_NEAR(m.variance, 4.0, 0.3);  // standard error of the variance about 0.04
}

TEST(Random, UnseededRunsDiffer) {
  const Attrs attrs{{"shape", ints({16})}};
  EXPECT_FALSE(same_values(eval("RandomNormal", {}, attrs, 1)[0], eval("RandomNormal", {}, attrs, 1)[0]));
}

TEST(Random, LikeFormsCopyShapeAndType) {
  Tensor ints_in = Tensor::allocate(DType::kInt32, {3, 4});
  Tensor half = eval("RandomUniformLike", {&ints_in}, {{"dtype", int_attr(static_cast<int64_t>(DType::kFloat16))}}, 1)[0];
  EXPECT_EQ(half.dtype(), DType::kFloat16);
  EXPECT_EQ(half.shape(), (std::vector<int64_t>{3, 4}));
  const Moments m = moments(half);
  EXPECT_GE(m.min, 0.0);
  EXPECT_LE(m.max, 1.0);
  Tensor floats_in = Tensor::allocate(DType::kFloat, {kSamples});
  Tensor normal = eval("RandomNormalLike", {&floats_in}, {{"seed", seed(3)}}, 1)[0];
  EXPECT_EQ(normal.dtype(), DType::kFloat);
  EXPECT_NEAR(moments(normal).mean, 0.0, 0.05);
  EXPECT_NEAR(moments(normal).variance, 1.0, 0.08);
  EXPECT_EQ(rule_type("RandomNormalLike", {RuleInput{typed(DType::kDouble, {ir::Dim::symbol("N"), 2})}}, {}, 1).to_string(),
            "double[N,2]");
  EXPECT_NE(rule_error("RandomUniformLike", {RuleInput{ir::make_type(DType::kInt32, {2})}}, {}, 1).find("dtype"),
            std::string::npos);
}

TEST(Random, ShapeRuleErrors) {
  EXPECT_NE(rule_error("RandomUniform", {}, {}, 1).find("shape"), std::string::npos);
  EXPECT_NE(rule_error("RandomNormal", {}, {{"shape", ints({2})}, {"dtype", int_attr(6)}}, 1).find("node_under_test"),
            std::string::npos);
  EXPECT_NE(rule_error("RandomNormal", {}, {{"shape", ints({-2})}}, 1).find("negative"), std::string::npos);
}

TEST(Random, BernoulliFrequencyAndDtypes) {
  std::vector<double> p(kSamples, 0.3);
  p[0] = 0.0;
  p[1] = 1.0;
  Tensor probs = Tensor::from_vector<double>(DType::kDouble, {kSamples}, p);
  Tensor y = eval("Bernoulli", {&probs}, {{"seed", seed(2)}}, 15)[0];
  EXPECT_EQ(y.dtype(), DType::kDouble);
  EXPECT_EQ(y.data<double>()[0], 0.0);
  EXPECT_EQ(y.data<double>()[1], 1.0);
  const Moments m = moments(y);
  EXPECT_TRUE(m.min == 0.0 && m.max == 1.0);
  EXPECT_NEAR(m.mean, 0.3, 0.02);  // standard error sqrt(0.21 / 20000) = 0.0032
  Tensor b = eval("Bernoulli", {&probs}, {{"seed", seed(2)}, {"dtype", int_attr(static_cast<int64_t>(DType::kBool))}}, 15)[0];
  EXPECT_EQ(b.dtype(), DType::kBool);
  EXPECT_TRUE(same_values(y, b));  // same seed, same draws
  EXPECT_NE(rule_error("Bernoulli", {RuleInput{ir::make_type(DType::kInt64, {2})}}, {}, 15).find("element type"),
            std::string::npos);
}

TEST(Random, MultinomialFrequencies) {
  // Log-probabilities of [0.2, 0.3, 0.5] and a class of probability 0 in a second batch row.
  const float zero_prob = -std::numeric_limits<float>::infinity();
  Tensor logits = f32({2, 3}, {std::log(0.2f), std::log(0.3f), std::log(0.5f), 0.0f, zero_prob, 0.0f});
  Tensor y = eval("Multinomial", {&logits},
                  {{"sample_size", int_attr(kSamples)}, {"seed", seed(4)}, {"dtype", int_attr(static_cast<int64_t>(DType::kInt64))}},
                  7)[0];
  EXPECT_EQ(y.dtype(), DType::kInt64);
  ASSERT_EQ(y.shape(), (std::vector<int64_t>{2, kSamples}));
  std::vector<double> freq(6, 0.0);
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t s = 0; s < kSamples; ++s) freq[static_cast<size_t>(b * 3 + y.data<int64_t>()[b * kSamples + s])] += 1.0 / kSamples;
  EXPECT_NEAR(freq[0], 0.2, 0.02);
  EXPECT_NEAR(freq[1], 0.3, 0.02);
  EXPECT_NEAR(freq[2], 0.5, 0.02);
  EXPECT_EQ(freq[4], 0.0);
  EXPECT_NEAR(freq[3], 0.5, 0.02);
  EXPECT_EQ(rule_type("Multinomial", {RuleInput{typed(DType::kFloat, {ir::Dim::symbol("B"), 3})}}, {}, 7).to_string(),
            "int32[B,1]");
  EXPECT_NE(rule_error("Multinomial", {known(logits)}, {{"sample_size", int_attr(0)}}, 7).find("sample_size"),
            std::string::npos);
}

TEST(Random, DropoutAtInferenceIsIdentityWithTrueMask) {
  Tensor x = f32({3}, {1, 2, 3});
  std::vector<Tensor> out = eval("Dropout", {&x}, {}, 13, 2);
  EXPECT_EQ(elements<float>(out[0]), (std::vector<float>{1, 2, 3}));
  ASSERT_EQ(out[1].dtype(), DType::kBool);
  EXPECT_EQ(elements<bool>(out[1]), (std::vector<bool>{true, true, true}));
  Tensor zero = f32({}, {0.0f});
  Tensor training = Tensor::from_vector<bool>(DType::kBool, {}, {true});
  EXPECT_EQ(elements<float>(eval("Dropout", {&x, &zero, &training})[0]), (std::vector<float>{1, 2, 3}));
}

TEST(Random, TrainingDropoutKeepsNumpysDrawsAndScales) {
  // numpy.random.seed(7); numpy.random.uniform(0, 1, 12) >= 0.25 gives this mask.
  const std::vector<bool> numpy_mask{false, true, true, true, true, true, true, false, true, true, true, true};
  Tensor x = iota_f32({3, 4});
  Tensor ratio = f32({}, {0.25f});
  Tensor training = Tensor::from_vector<bool>(DType::kBool, {}, {true});
  std::vector<Tensor> out = eval("Dropout", {&x, &ratio, &training}, {{"seed", int_attr(7)}}, 13, 2);
  EXPECT_EQ(elements<bool>(out[1]), numpy_mask);
  for (size_t i = 0; i < numpy_mask.size(); ++i)
    EXPECT_FLOAT_EQ(elements<float>(out[0])[i], numpy_mask[i] ? static_cast<float>(i) / 0.75f : 0.0f);
}

TEST(Random, TrainingDropoutKeepsOneMinusRatioOnAverage) {
  Tensor x = f32({kSamples}, std::vector<float>(kSamples, 1.0f));
  Tensor ratio = f32({}, {0.4f});
  Tensor training = Tensor::from_vector<bool>(DType::kBool, {}, {true});
  Tensor y = eval("Dropout", {&x, &ratio, &training}, {}, 13)[0];
  const Moments m = moments(y);
  EXPECT_EQ(m.min, 0.0);
  EXPECT_NEAR(m.max, 1.0 / 0.6, 1e-6);
  EXPECT_NEAR(m.mean, 1.0, 0.03);  // E[y] = x; standard error sqrt(0.4 / 0.6 / 20000) = 0.006
}

TEST(Random, DropoutRatioOutsideUnitIntervalIsRefused) {
  Tensor x = f32({3}, {1, 2, 3});
  Tensor one = f32({}, {1.0f});
  Tensor training = Tensor::from_vector<bool>(DType::kBool, {}, {true});
  Result<std::vector<Tensor>> r = evaluate_op("Dropout", {&x, &one, &training});
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("ratio"), std::string::npos);
}

}  // namespace
}  // namespace kiln::ops
