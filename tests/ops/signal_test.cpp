// Tests of the signal ops: DFT, STFT, the cosine-sum windows and MelWeightMatrix. Expected values
// come from numpy 1.24 (np.fft.fft/rfft/ifft, np.hanning, np.blackman) and from the ONNX 1.12
// MelWeightMatrix reference code, as noted at each case.
#include <gtest/gtest.h>

#include "ops/rule_harness.h"

namespace kiln::ops {
namespace {

using namespace testing;

Tensor i64_scalar(int64_t v) { return Tensor::from_vector<int64_t>(DType::kInt64, {}, {v}); }

TEST(Signal, DftRealWithPaddingAndTruncation) {
  Tensor x = f32({1, 4, 1}, {1, 2, 0.5f, -1});
  Tensor six = i64_scalar(6), three = i64_scalar(3);
  // np.fft.fft([1, 2, 0.5, -1], 6)
  Tensor padded = eval("DFT", {&x, &six})[0];
  EXPECT_EQ(padded.shape(), (std::vector<int64_t>{1, 6, 2}));
  expect_near_all(elements<float>(padded), {2.5f, 0, 2.75f, -2.16506351f, -1.25f, -1.29903811f, 0.5f, 0,
                                            -1.25f, 1.29903811f, 2.75f, 2.16506351f});
  // np.fft.fft([1, 2, 0.5, -1], 3)
  expect_near_all(elements<float>(eval("DFT", {&x, &three})[0]),
                  {3.5f, 0, -0.25f, -1.29903811f, -0.25f, 1.29903811f});
  // np.fft.rfft([1, 2, 0.5, -1])
  Tensor half = eval("DFT", {&x}, {{"onesided", int_attr(1)}})[0];
  EXPECT_EQ(half.shape(), (std::vector<int64_t>{1, 3, 2}));
  expect_near_all(elements<float>(half), {2.5f, 0, 0.5f, -3, 0.5f, 0});
}

TEST(Signal, DftInverseOfComplexInputOnNegativeAxis) {
  // np.fft.ifft([1+2j, -1+0.5j, 3-1j])
  Tensor x = f32({1, 3, 2}, {1, 2, -1, 0.5f, 3, -1});
  Tensor y = eval("DFT", {&x}, {{"inverse", int_attr(1)}, {"axis", int_attr(-2)}})[0];
  expect_near_all(elements<float>(y), {1, 0.5f, -0.4330127f, -0.40470054f, 0.4330127f, 1.90470054f});
}

TEST(Signal, DftShapeRules) {
  const ir::TensorType t = rule_type("DFT", {RuleInput{typed(DType::kFloat, {ir::Dim::symbol("N"), 8, 5, 1})}},
                                     {{"axis", int_attr(1)}, {"onesided", int_attr(1)}});
  EXPECT_EQ(t.to_string(), "float[N,5,5,2]");
  EXPECT_NE(rule_error("DFT", {RuleInput{ir::make_type(DType::kFloat, {2, 8, 1})}}, {{"axis", int_attr(2)}})
                .find("node_under_test"),
            std::string::npos);
  EXPECT_NE(rule_error("DFT", {RuleInput{ir::make_type(DType::kFloat, {2, 8, 3})}}).find("real"), std::string::npos);
  EXPECT_NE(rule_error("DFT", {RuleInput{ir::make_type(DType::kFloat, {2, 8, 2})}}, {{"onesided", int_attr(1)}})
                .find("onesided"),
            std::string::npos);
  EXPECT_NE(rule_error("DFT", {RuleInput{ir::make_type(DType::kInt32, {2, 8, 1})}}).find("element type"),
            std::string::npos);
}

TEST(Signal, StftWithWindow) {
  // Frames of np.arange(6) with step 2, each times [0.5, 1, 0.5, 0.25], then np.fft.fft(...)[:3].
  Tensor signal = iota_f32({1, 6, 1});
  Tensor step = i64_scalar(2);
  Tensor window = f32({4}, {0.5f, 1, 0.5f, 0.25f});
  Tensor y = eval("STFT", {&signal, &step, &window})[0];
  EXPECT_EQ(y.shape(), (std::vector<int64_t>{1, 2, 3, 2}));
  expect_near_all(elements<float>(y), {2.75f, 0, -1, -0.25f, -0.75f, 0, 7.25f, 0, -1, -1.75f, -1.25f, 0});
  // Two-sided with frame_length and no window: np.fft.fft(np.arange(6)[2:6]) for the second frame.
  Tensor length = i64_scalar(4);
  Tensor full = eval("STFT", {&signal, &step, nullptr, &length}, {{"onesided", int_attr(0)}})[0];
  EXPECT_EQ(full.shape(), (std::vector<int64_t>{1, 2, 4, 2}));
  const std::vector<float> all = elements<float>(full);
  expect_near_all(std::vector<float>(all.begin() + 8, all.end()), {14, 0, -2, 2, -2, 0, -2, -2});
}

TEST(Signal, StftShapeRules) {
  Tensor step = i64_scalar(8), length = i64_scalar(16);
  EXPECT_EQ(rule_type("STFT", {RuleInput{typed(DType::kFloat, {ir::Dim::symbol("B"), 128, 1})}, known(step),
                               std::nullopt, known(length)})
                .to_string(),
            "float[B,15,9,2]");
  EXPECT_NE(rule_error("STFT", {RuleInput{ir::make_type(DType::kFloat, {1, 128, 1})}, known(step)}).find("window"),
            std::string::npos);
  Tensor long_frame = i64_scalar(200);
  EXPECT_NE(rule_error("STFT", {RuleInput{ir::make_type(DType::kFloat, {1, 128, 1})}, known(step), std::nullopt,
                                known(long_frame)})
                .find("exceeds"),
            std::string::npos);
  EXPECT_NE(rule_error("STFT", {RuleInput{ir::make_type(DType::kFloat, {1, 128, 2})}, known(step), std::nullopt,
                                known(length)})
                .find("onesided"),
            std::string::npos);
}

TEST(Signal, Windows) {
  Tensor five = i64_scalar(5), four = i64_scalar(4);
  const Attrs symmetric{{"periodic", int_attr(0)}};
  // np.hanning(5), np.blackman(5): symmetric windows.
  expect_near_all(elements<float>(eval("HannWindow", {&five}, symmetric)[0]), {0, 0.5f, 1, 0.5f, 0});
  expect_near_all(elements<float>(eval("BlackmanWindow", {&five}, symmetric)[0]), {0, 0.34f, 1, 0.34f, 0});
  // Periodic Hann of 4: 0.5 - 0.5 cos(2 pi n / 4).
  expect_near_all(elements<float>(eval("HannWindow", {&four})[0]), {0, 0.5f, 1, 0.5f});
  // Hamming with a0 = 25/46 (the ONNX definition), symmetric, size 5.
  Tensor hamming = eval("HammingWindow", {&five}, {{"periodic", int_attr(0)}, {"output_datatype", int_attr(11)}})[0];
  EXPECT_EQ(hamming.dtype(), DType::kDouble);
  const std::vector<double> want{0.08695652, 0.54347826, 1.0, 0.54347826, 0.08695652};
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(elements<double>(hamming)[i], want[i], 1e-8);
  EXPECT_EQ(rule_type("HannWindow", {RuleInput{ir::make_type(DType::kInt32, {})}}).to_string(), "float[?]");
  EXPECT_NE(rule_error("HannWindow", {known(five)}, {{"output_datatype", int_attr(8)}}).find("output_datatype"),
            std::string::npos);
  Tensor negative = i64_scalar(-1);
  EXPECT_NE(rule_error("BlackmanWindow", {known(negative)}).find("negative"), std::string::npos);
}

TEST(Signal, MelWeightMatrix) {
  // The ONNX 1.12 reference code (onnx/backend/test/case/node/melweightmatrix.py) run with
  // num_mel_bins=3, dft_length=32, sample_rate=16000, lower=0, upper=8000: filter points [0 0 2 5 9].
  Tensor bins = i64_scalar(3), length = i64_scalar(32), rate = i64_scalar(16000);
  Tensor lower = f32({}, {0}), upper = f32({}, {8000});
  Tensor m = eval("MelWeightMatrix", {&bins, &length, &rate, &lower, &upper})[0];
  ASSERT_EQ(m.shape(), (std::vector<int64_t>{17, 3}));
  std::vector<float> want(17 * 3, 0.0f);
  const std::vector<float> head{1, 0, 0, 0.5f, 0.5f, 0, 0, 1, 0, 0, 2.0f / 3, 1.0f / 3, 0, 1.0f / 3, 2.0f / 3,
                                0, 0, 1, 0, 0, 0.75f, 0, 0, 0.5f, 0, 0, 0.25f};
  std::copy(head.begin(), head.end(), want.begin());
  expect_near_all(elements<float>(m), want);
  Tensor zero = i64_scalar(0);
  EXPECT_NE(rule_error("MelWeightMatrix", {known(zero), known(length), known(rate), known(lower), known(upper)})
                .find("positive"),
            std::string::npos);
  EXPECT_NE(rule_error("MelWeightMatrix", {known(bins), known(length), known(rate), known(upper), known(lower)})
                .find("lower_edge_hertz"),
            std::string::npos);
}

}  // namespace
}  // namespace kiln::ops
