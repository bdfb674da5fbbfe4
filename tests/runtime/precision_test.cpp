// Tests of reduced precision as a compile choice: bf16 and int8 products agree with fp32 within
// their rounding and the report says which product ran in what; a precision the target lacks is an
// UnsupportedTarget naming the feature (the avx2.* run proves the refusal on an AVX-512 machine);
// keep_fp32 by node and op; the accuracy check against fp32 on validation inputs, its budget, and
// bad validation inputs; an artifact keeps its products' precision. The zoo's trained models run
// the same against ONNX Runtime (tests/zoo, zoo.CASE.bf16 and .int8).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <tuple>
#include <nlohmann/json.hpp>

#include "kiln/session.h"
#include "support/model_builder.h"
#include "support/tensor_compare.h"
#include "support/test_target.h"

namespace kiln {
namespace {

using testing::ModelBuilder;
using testing::relative_difference;
using testing::ScratchDir;
constexpr int kFloat = onnx::TensorProto::FLOAT;

std::vector<float> random_values(size_t count, uint64_t seed, float scale) {
  const Tensor t = random_tensor(DType::kFloat, {static_cast<int64_t>(count)}, seed);
  std::vector<float> v(t.data<float>(), t.data<float>() + count);
  for (float& x : v) x *= scale;
  return v;
}

// scores[2, 10] = Gemm(Flatten(Relu(Conv(x[2, 8, 6, 6], W 16x8x3x3, pads 1))), W2 [576, 10]):
// one convolution and one matrix product, both with constant weights, ending in class scores.
std::string classifier(const ScratchDir& dir) {
  ModelBuilder b;
  b.input("x", kFloat, {int64_t{2}, int64_t{8}, int64_t{6}, int64_t{6}});
  b.output("scores", kFloat, {int64_t{2}, int64_t{10}});
  b.float_initializer("w", {16, 8, 3, 3}, random_values(16 * 8 * 9, 11, 0.3f));
  b.float_initializer("b", {16}, random_values(16, 12, 0.1f));
  b.float_initializer("w2", {576, 10}, random_values(5760, 13, 0.1f));
  b.float_initializer("b2", {10}, random_values(10, 14, 0.1f));
  auto& conv = b.node("Conv", {"x", "w", "b"}, {"c"}, "conv");
  ModelBuilder::ints_attribute(conv, "pads", {1, 1, 1, 1});
  b.node("Relu", {"c"}, {"r"}, "relu");
  b.node("Flatten", {"r"}, {"f"}, "flatten");
  b.node("Gemm", {"f", "w2", "b2"}, {"scores"}, "classifier");
  return b.save(dir.file("classifier.onnx"));
}

Tensor input(uint64_t seed) { return random_tensor(DType::kFloat, {2, 8, 6, 6}, seed); }

SessionOptions options_for(const std::string& precision) {
  SessionOptions o;
  o.isa = testing::test_isa();
  o.precision = precision;
  return o;
}

nlohmann::json precision_of(const Session& session) { return nlohmann::json::parse(session.report_json())["precision"]; }

const nlohmann::json& product_entry(const nlohmann::json& precision, const std::string& node) {
  for (const auto& p : precision["products"])
    if (p["node"] == node) return p;
  static const nlohmann::json none;
  return none;
}

std::string product_precision(const nlohmann::json& precision, const std::string& node) {
  for (const auto& p : precision["products"])
    if (p["node"] == node) return p["precision"];
  return "(absent)";
}


Tensor run(Session& session, const Tensor& x) { return session.run({{"x", x}}).value().at("scores"); }

TEST(ReducedPrecision, Bf16ProductsAgreeWithFp32OrTheTargetNamesWhatItLacks) {
  ScratchDir dir("precision");
  const std::string model = classifier(dir);
  auto fp32 = Session::load(model, options_for("fp32"));
  ASSERT_TRUE(fp32.is_ok()) << fp32.status().to_string();
  auto bf16 = Session::load(model, options_for("bf16"));
  if (!testing::test_target().bf16()) {
    ASSERT_EQ(bf16.status().code(), StatusCode::kUnsupportedTarget) << bf16.status().to_string();
    EXPECT_NE(bf16.status().message().find("avx512bf16"), std::string::npos) << bf16.status().message();
    GTEST_SKIP() << "this target has no bf16 products: " << bf16.status().message();
  }
  ASSERT_TRUE(bf16.is_ok()) << bf16.status().to_string();
  const nlohmann::json precision = precision_of(*bf16.value());
  EXPECT_EQ(precision["requested"], "bf16");
  EXPECT_EQ(precision["reduced_products"], 2);
  EXPECT_EQ(product_precision(precision, "conv"), "bf16");
  EXPECT_EQ(product_precision(precision, "classifier"), "bf16");
  const nlohmann::json& accuracy = precision["accuracy"];
  EXPECT_EQ(accuracy["validation_inputs"], "generated");
  ASSERT_EQ(accuracy["outputs"].size(), 1u);
  EXPECT_GT(accuracy["outputs"][0]["cosine"].get<double>(), 0.999);
  EXPECT_TRUE(accuracy["outputs"][0].contains("top1_agreement")) << "[2, 10] scores are class scores";
  for (uint64_t seed : {21, 22}) {
    const Tensor x = input(seed);
    // bfloat16 rounds each factor to 2^-9 relative; sums of 72 and 576 products stay well inside 2e-2.
    EXPECT_LT(relative_difference(run(*bf16.value(), x), run(*fp32.value(), x)), 2e-2);
  }
  EXPECT_NE(bf16.value()->report_json().find("avx512_core_bf16"), std::string::npos) << "oneDNN's bf16 kernels ran";
}

// y[1, 16, 6, 6] = Conv_c(v) + Conv_b(v), v = Relu(Conv_a(x[1, 16, 6, 6])), then z[1, 16] =
// Gemm-free matrix products z = Relu(MatMul(p, w_d) + b_d) x w_e over p = Flatten(GlobalAveragePool(y))
// reshaped: v is read only by two bf16 convolutions, as their activation; Conv_b's output is summed
// into Conv_c's (a residual input); the first matrix product's output is read only by the second.
// With `inner_outputs`, v and dr are outputs of the graph too (so never kept in a reduced type).
std::string bf16_chain(const ScratchDir& dir, bool inner_outputs = false) {
  ModelBuilder b;
  b.input("x", kFloat, {int64_t{1}, int64_t{16}, int64_t{6}, int64_t{6}});
  b.output("y", kFloat, {int64_t{1}, int64_t{16}, int64_t{6}, int64_t{6}});
  b.output("z", kFloat, {int64_t{1}, int64_t{16}});
  if (inner_outputs) {
    b.output("v", kFloat, {int64_t{1}, int64_t{16}, int64_t{6}, int64_t{6}});
    b.output("dr", kFloat, {int64_t{1}, int64_t{32}});
  }
  for (const char* w : {"wa", "wb", "wc"}) b.float_initializer(w, {16, 16, 3, 3}, random_values(16 * 16 * 9, 60 + w[1], 0.1f));
  b.float_initializer("wd", {16, 32}, random_values(16 * 32, 71, 0.2f));
  b.float_initializer("bd", {32}, random_values(32, 72, 0.1f));
  b.float_initializer("we", {32, 16}, random_values(32 * 16, 73, 0.2f));
  for (const auto& [in, w, out] : {std::tuple{"x", "wa", "a"}, {"v", "wb", "cb"}, {"v", "wc", "cc"}}) {
    auto& conv = b.node("Conv", {in, w}, {out}, std::string("conv_") + w[1]);
    ModelBuilder::ints_attribute(conv, "pads", {1, 1, 1, 1});
  }
  b.node("Relu", {"a"}, {"v"}, "relu_a");
  b.node("Add", {"cc", "cb"}, {"y"}, "sum");
  b.node("GlobalAveragePool", {"y"}, {"pooled"}, "pool");
  b.node("Flatten", {"pooled"}, {"p"}, "flatten");
  b.node("MatMul", {"p", "wd"}, {"d"}, "matmul_d");
  b.node("Add", {"d", "bd"}, {"db"}, "bias_d");
  b.node("Relu", {"db"}, {"dr"}, "relu_d");
  b.node("MatMul", {"dr", "we"}, {"z"}, "matmul_e");
  return b.save(dir.file(inner_outputs ? "chain_inner_outputs.onnx" : "bf16_chain.onnx"));
}

// A value between two bf16 products stays bfloat16: the report lists it, the products read and
// write it as it is (fewer conversions in the kernels), and the outputs agree with fp32 as before;
// so does one a bf16 product sums into its output as its residual (widened into a float32
// output); values read by a float32 op or leaving the graph stay float32. An artifact keeps the
// values' types.
TEST(ReducedPrecision, Bf16ValuesBetweenBf16ProductsStayBf16) {
  if (!testing::test_target().bf16()) GTEST_SKIP() << "this target has no bf16 products";
  ScratchDir dir("precision");
  const std::string model = bf16_chain(dir);
  auto fp32 = Session::load(model, options_for("fp32"));
  auto bf16 = Session::load(model, options_for("bf16"));
  ASSERT_TRUE(fp32.is_ok() && bf16.is_ok()) << bf16.status().to_string();
  const nlohmann::json report = nlohmann::json::parse(bf16.value()->report_json());
  const nlohmann::json& precision = report["precision"];
  EXPECT_EQ(precision["reduced_products"], 5) << precision.dump();
  ASSERT_EQ(precision["bf16_values"].size(), 3u) << precision.dump();
  // (v and cb in the convolutions' blocked or channels-last layout: their names say which.)
  EXPECT_EQ(precision["bf16_values"][0].get<std::string>().substr(0, 2), "v_") << "read only by conv_b and conv_c, as their input";
  EXPECT_EQ(precision["bf16_values"][1].get<std::string>().substr(0, 1), "c") << "one convolution's output, read only as the other's residual";
  EXPECT_EQ(precision["bf16_values"][2], "dr") << "read only by matmul_e, which takes its fused form";
  EXPECT_EQ(precision["products"][4]["op"], "FusedMatMul") << precision.dump();
  // Only conv_a and matmul_d convert their float32 inputs; conv_b, conv_c and matmul_e read bf16
  // values as they are (each converted its own copy before: 5 conversions).
  const nlohmann::json fp32_memory = nlohmann::json::parse(fp32.value()->report_json())["memory"];
  EXPECT_LE(report["memory"]["kernel_reorders"].get<int64_t>(), fp32_memory["kernel_reorders"].get<int64_t>() + 2) << report["memory"].dump();
  const Tensor x = random_tensor(DType::kFloat, {1, 16, 6, 6}, 74);
  auto expected = fp32.value()->run({{"x", x}});
  auto got = bf16.value()->run({{"x", x}});
  ASSERT_TRUE(expected.is_ok() && got.is_ok()) << got.status().to_string();
  for (const char* output : {"y", "z"}) {
    EXPECT_EQ(got.value().at(output).dtype(), DType::kFloat) << output;
    // Two bf16 roundings on the way to each output (the input, then v or dr) of sums of 144 and 32 products.
    EXPECT_LT(relative_difference(got.value().at(output), expected.value().at(output)), 2e-2) << output;
  }
  ASSERT_TRUE(bf16.value()->write_artifact(dir.file("chain.kiln")).is_ok());
  SessionOptions o;
  o.isa = testing::test_isa();
  auto loaded = Session::load(dir.file("chain.kiln"), o);
  ASSERT_TRUE(loaded.is_ok()) << loaded.status().to_string();
  EXPECT_EQ(precision_of(*loaded.value())["bf16_values"], precision["bf16_values"]);
  auto reloaded = loaded.value()->run({{"x", x}});
  ASSERT_TRUE(reloaded.is_ok()) << reloaded.status().to_string();
  for (const char* output : {"y", "z"})
    EXPECT_EQ(relative_difference(reloaded.value().at(output), got.value().at(output)), 0.0) << "same machine, same kernels";
}

// Static int8 likewise keeps a value between int8 products uint8, in its calibrated quantization:
// the writer quantizes its output (after its epilogue) as the readers would have quantized their
// input, so the results are those of the same model with every value float32 (up to a uint8 code
// moved at a rounding tie: the writer scales by 1 / scale where the reader divided); every target
// runs it (the AVX2 cap included). An artifact keeps the values' types and quantization.
TEST(ReducedPrecision, Uint8ValuesBetweenStaticInt8ProductsStayUint8) {
  ScratchDir dir("precision");
  const std::string model = bf16_chain(dir), unkept = bf16_chain(dir, true);
  SessionOptions o = options_for("int8");
  for (uint64_t seed = 81; seed < 85; ++seed)
    o.calibration_inputs.push_back({"calib-" + std::to_string(seed), {{"x", random_tensor(DType::kFloat, {1, 16, 6, 6}, seed)}}});
  auto fp32 = Session::load(model, options_for("fp32"));
  auto int8 = Session::load(model, o);
  auto float_values = Session::load(unkept, o);
  ASSERT_TRUE(fp32.is_ok() && int8.is_ok() && float_values.is_ok()) << int8.status().to_string() << float_values.status().to_string();
  const nlohmann::json precision = precision_of(*int8.value());
  EXPECT_EQ(precision["reduced_products"], 5) << precision.dump();
  ASSERT_EQ(precision["uint8_values"].size(), 3u) << precision.dump();
  EXPECT_EQ(precision["uint8_values"][0].get<std::string>().substr(0, 2), "v_") << "read only by conv_b and conv_c, as their input";
  EXPECT_EQ(precision["uint8_values"][1].get<std::string>().substr(0, 1), "c") << "one convolution's output, read only as the other's residual";
  EXPECT_EQ(precision["uint8_values"][2], "dr") << "read only by matmul_e";
  EXPECT_FALSE(precision.contains("bf16_values"));
  EXPECT_EQ(precision_of(*float_values.value())["uint8_values"].size(), 1u) << "graph outputs stay float32; the residual does not leave";
  EXPECT_NE(int8.value()->report_summary().find("3 values kept uint8 between int8 products"), std::string::npos)
      << int8.value()->report_summary();
  for (uint64_t seed : {91, 92}) {
    const Tensor x = random_tensor(DType::kFloat, {1, 16, 6, 6}, seed);
    auto expected = fp32.value()->run({{"x", x}});
    auto got = int8.value()->run({{"x", x}});
    auto unkept_got = float_values.value()->run({{"x", x}});
    ASSERT_TRUE(expected.is_ok() && got.is_ok() && unkept_got.is_ok()) << got.status().to_string();
    for (const char* output : {"y", "z"}) {
      EXPECT_EQ(got.value().at(output).dtype(), DType::kFloat) << output;
      EXPECT_LT(relative_difference(got.value().at(output), unkept_got.value().at(output)), 2e-3) << output << ": kept or not";
      // y sums two products of quantized inputs, one of them quantized again as the residual (5.5e-2
      // and 6.2e-2 measured natively and at the AVX2 cap).
      EXPECT_LT(relative_difference(got.value().at(output), expected.value().at(output)), 8e-2) << output << ": against fp32";
    }
  }
  ASSERT_TRUE(int8.value()->write_artifact(dir.file("int8_chain.kiln")).is_ok());
  SessionOptions plain;
  plain.isa = testing::test_isa();
  auto loaded = Session::load(dir.file("int8_chain.kiln"), plain);
  ASSERT_TRUE(loaded.is_ok()) << loaded.status().to_string();
  EXPECT_EQ(precision_of(*loaded.value())["uint8_values"], precision["uint8_values"]);
  const Tensor x = random_tensor(DType::kFloat, {1, 16, 6, 6}, 93);
  auto before = int8.value()->run({{"x", x}});
  auto after = loaded.value()->run({{"x", x}});
  ASSERT_TRUE(before.is_ok() && after.is_ok()) << after.status().to_string();
  for (const char* output : {"y", "z"})
    EXPECT_EQ(relative_difference(after.value().at(output), before.value().at(output)), 0.0) << "same machine, same kernels";
}

// y, z = Conv_b(m), Conv_c(m), m = MaxPool(Relu(Conv_a(x[1, 8, 8, 8])), 3x3, stride 2, pads 1):
// a max pool between three convolutions (ResNet's stem, SqueezeNet's). With `pool_output`, m is an
// output of the graph too (so never kept in a reduced type).
std::string pool_between_convolutions(const ScratchDir& dir, bool pool_output = false) {
  ModelBuilder b;
  b.input("x", kFloat, {int64_t{1}, int64_t{8}, int64_t{8}, int64_t{8}});
  b.output("y", kFloat, {int64_t{1}, int64_t{16}, int64_t{4}, int64_t{4}});
  b.output("z", kFloat, {int64_t{1}, int64_t{8}, int64_t{4}, int64_t{4}});
  if (pool_output) b.output("m", kFloat, {int64_t{1}, int64_t{16}, int64_t{4}, int64_t{4}});
  b.float_initializer("wa", {16, 8, 3, 3}, random_values(16 * 8 * 9, 101, 0.3f));
  b.float_initializer("ba", {16}, random_values(16, 102, 0.2f));
  b.float_initializer("wb", {16, 16, 3, 3}, random_values(16 * 16 * 9, 103, 0.2f));
  b.float_initializer("wc", {8, 16, 1, 1}, random_values(8 * 16, 104, 0.3f));
  auto& conv_a = b.node("Conv", {"x", "wa", "ba"}, {"a"}, "conv_a");
  ModelBuilder::ints_attribute(conv_a, "pads", {1, 1, 1, 1});
  b.node("Relu", {"a"}, {"r"}, "relu_a");
  auto& pool = b.node("MaxPool", {"r"}, {"m"}, "pool");
  ModelBuilder::ints_attribute(pool, "kernel_shape", {3, 3});
  ModelBuilder::ints_attribute(pool, "strides", {2, 2});
  ModelBuilder::ints_attribute(pool, "pads", {1, 1, 1, 1});
  auto& conv_b = b.node("Conv", {"m", "wb"}, {"y"}, "conv_b");
  ModelBuilder::ints_attribute(conv_b, "pads", {1, 1, 1, 1});
  b.node("Conv", {"m", "wc"}, {"z"}, "conv_c");
  return b.save(dir.file(pool_output ? "pool_output.onnx" : "pool_between.onnx"));
}

// A max pool passes a kept value through (the max of rounded values is the rounded max): in static
// int8 the convolution before it writes uint8 and the two after it read uint8, the pool's input and
// output in one quantization; the results are those of the same model with the pool's output
// float32 (up to a code moved at a rounding tie). bf16 likewise where the target has it. An
// artifact keeps the values' types.
TEST(ReducedPrecision, MaxPoolsPassKeptValuesThrough) {
  ScratchDir dir("precision");
  const std::string model = pool_between_convolutions(dir), unkept = pool_between_convolutions(dir, true);
  SessionOptions o = options_for("int8");
  for (uint64_t seed = 111; seed < 115; ++seed)
    o.calibration_inputs.push_back({"calib-" + std::to_string(seed), {{"x", random_tensor(DType::kFloat, {1, 8, 8, 8}, seed)}}});
  auto fp32 = Session::load(model, options_for("fp32"));
  auto int8 = Session::load(model, o);
  auto float_pool = Session::load(unkept, o);
  ASSERT_TRUE(fp32.is_ok() && int8.is_ok() && float_pool.is_ok()) << int8.status().to_string() << float_pool.status().to_string();
  const nlohmann::json precision = precision_of(*int8.value());
  EXPECT_EQ(precision["reduced_products"], 3) << precision.dump();
  ASSERT_EQ(precision["uint8_values"].size(), 2u) << "the pool's input and output: " << precision.dump();
  EXPECT_EQ(product_entry(precision, "conv_b")["input_quantization"], product_entry(precision, "conv_c")["input_quantization"]);
  EXPECT_FALSE(precision_of(*float_pool.value()).contains("uint8_values")) << "the pool's output leaves the graph";
  for (uint64_t seed : {121, 122}) {
    const Tensor x = random_tensor(DType::kFloat, {1, 8, 8, 8}, seed);
    auto expected = fp32.value()->run({{"x", x}});
    auto got = int8.value()->run({{"x", x}});
    auto unkept_got = float_pool.value()->run({{"x", x}});
    ASSERT_TRUE(expected.is_ok() && got.is_ok() && unkept_got.is_ok()) << got.status().to_string();
    for (const char* output : {"y", "z"}) {
      EXPECT_LT(relative_difference(got.value().at(output), unkept_got.value().at(output)), 2e-3) << output << ": kept or not";
      EXPECT_LT(relative_difference(got.value().at(output), expected.value().at(output)), 5e-2) << output << ": against fp32";
    }
  }
  ASSERT_TRUE(int8.value()->write_artifact(dir.file("pool.kiln")).is_ok());
  SessionOptions plain;
  plain.isa = testing::test_isa();
  auto loaded = Session::load(dir.file("pool.kiln"), plain);
  ASSERT_TRUE(loaded.is_ok()) << loaded.status().to_string();
  EXPECT_EQ(precision_of(*loaded.value())["uint8_values"], precision["uint8_values"]);
  if (!testing::test_target().bf16()) return;
  auto bf16 = Session::load(model, options_for("bf16"));
  ASSERT_TRUE(bf16.is_ok()) << bf16.status().to_string();
  EXPECT_EQ(precision_of(*bf16.value())["bf16_values"].size(), 2u) << precision_of(*bf16.value()).dump();
  const Tensor x = random_tensor(DType::kFloat, {1, 8, 8, 8}, 123);
  auto expected = fp32.value()->run({{"x", x}});
  auto got = bf16.value()->run({{"x", x}});
  ASSERT_TRUE(expected.is_ok() && got.is_ok()) << got.status().to_string();
  for (const char* output : {"y", "z"}) EXPECT_LT(relative_difference(got.value().at(output), expected.value().at(output)), 2e-2) << output;
}

// y = Conv_d(s), s = Relu(Conv_c(t) + a), t = Relu(Conv_b(a)), a = Relu(Conv_a(x[1, 16, 6, 6])):
// a residual block (ResNet's). With `block_output`, s is an output of the graph too.
std::string residual_block(const ScratchDir& dir, bool block_output = false) {
  ModelBuilder b;
  b.input("x", kFloat, {int64_t{1}, int64_t{16}, int64_t{6}, int64_t{6}});
  b.output("y", kFloat, {int64_t{1}, int64_t{8}, int64_t{6}, int64_t{6}});
  if (block_output) b.output("s", kFloat, {int64_t{1}, int64_t{16}, int64_t{6}, int64_t{6}});
  for (const char* w : {"wa", "wb", "wc"}) b.float_initializer(w, {16, 16, 3, 3}, random_values(16 * 16 * 9, 130 + w[1], 0.1f));
  b.float_initializer("wd", {8, 16, 1, 1}, random_values(8 * 16, 134, 0.3f));
  for (const auto& [in, w, out] : {std::tuple{"x", "wa", "ca"}, {"a", "wb", "cb"}, {"t", "wc", "cc"}}) {
    auto& conv = b.node("Conv", {in, w}, {out}, std::string("conv_") + w[1]);
    ModelBuilder::ints_attribute(conv, "pads", {1, 1, 1, 1});
  }
  b.node("Relu", {"ca"}, {"a"}, "relu_a");
  b.node("Relu", {"cb"}, {"t"}, "relu_b");
  b.node("Add", {"cc", "a"}, {"sum"}, "sum");
  b.node("Relu", {"sum"}, {"s"}, "relu_s");
  b.node("Conv", {"s", "wd"}, {"y"}, "conv_d");
  return b.save(dir.file(block_output ? "block_output.onnx" : "residual_block.onnx"));
}

// In static int8 a residual stays uint8 as well: the block's input a, read by conv_b as its input
// and by conv_c as its residual, is uint8, and conv_c sums it in its own quantization into its
// uint8 output s (or, where s leaves the graph, into float32, widened); the results are those of
// the same model with s float32 (up to a code moved at a rounding tie). An artifact keeps it.
TEST(ReducedPrecision, ResidualSumsKeepUint8Values) {
  ScratchDir dir("precision");
  const std::string model = residual_block(dir), unkept = residual_block(dir, true);
  SessionOptions o = options_for("int8");
  for (uint64_t seed = 141; seed < 145; ++seed)
    o.calibration_inputs.push_back({"calib-" + std::to_string(seed), {{"x", random_tensor(DType::kFloat, {1, 16, 6, 6}, seed)}}});
  auto fp32 = Session::load(model, options_for("fp32"));
  auto int8 = Session::load(model, o);
  auto float_sum = Session::load(unkept, o);
  ASSERT_TRUE(fp32.is_ok() && int8.is_ok() && float_sum.is_ok()) << int8.status().to_string() << float_sum.status().to_string();
  const nlohmann::json precision = precision_of(*int8.value()), unkept_precision = precision_of(*float_sum.value());
  EXPECT_EQ(precision["reduced_products"], 4) << precision.dump();
  EXPECT_EQ(precision["uint8_values"].size(), 3u) << "a, t and s: " << precision.dump();
  EXPECT_EQ(unkept_precision["uint8_values"].size(), 2u) << "a and t: " << unkept_precision.dump();
  const nlohmann::json& sum = product_entry(precision, "conv_c");
  EXPECT_EQ(sum["residual"], product_entry(precision, "conv_b")["input"]) << precision.dump();
  EXPECT_EQ(sum["residual_quantization"], product_entry(precision, "conv_b")["input_quantization"]) << precision.dump();
  for (uint64_t seed : {151, 152}) {
    const Tensor x = random_tensor(DType::kFloat, {1, 16, 6, 6}, seed);
    auto expected = fp32.value()->run({{"x", x}});
    auto got = int8.value()->run({{"x", x}});
    auto unkept_got = float_sum.value()->run({{"x", x}});
    ASSERT_TRUE(expected.is_ok() && got.is_ok() && unkept_got.is_ok()) << got.status().to_string() << unkept_got.status().to_string();
    EXPECT_LT(relative_difference(got.value().at("y"), unkept_got.value().at("y")), 2e-3) << "s kept or not";
    // Four quantized inputs (a twice: as conv_b's input and as the residual) over sums of 144 products.
    EXPECT_LT(relative_difference(got.value().at("y"), expected.value().at("y")), 5e-2) << "against fp32";
  }
  ASSERT_TRUE(int8.value()->write_artifact(dir.file("residual.kiln")).is_ok());
  SessionOptions plain;
  plain.isa = testing::test_isa();
  auto loaded = Session::load(dir.file("residual.kiln"), plain);
  ASSERT_TRUE(loaded.is_ok()) << loaded.status().to_string();
  EXPECT_EQ(product_entry(precision_of(*loaded.value()), "conv_c")["residual_quantization"], sum["residual_quantization"]);
  const Tensor x = random_tensor(DType::kFloat, {1, 16, 6, 6}, 153);
  auto before = int8.value()->run({{"x", x}});
  auto after = loaded.value()->run({{"x", x}});
  ASSERT_TRUE(before.is_ok() && after.is_ok()) << after.status().to_string();
  EXPECT_EQ(relative_difference(after.value().at("y"), before.value().at("y")), 0.0) << "same machine, same kernels";
}

TEST(ReducedPrecision, Int8ConvolutionsAndMatrixProductsAgreeWithFp32) {
  ScratchDir dir("precision");
  const std::string model = classifier(dir);
  auto fp32 = Session::load(model, options_for("fp32"));
  auto int8 = Session::load(model, options_for("int8"));
  ASSERT_TRUE(fp32.is_ok() && int8.is_ok()) << int8.status().to_string();
  const nlohmann::json precision = precision_of(*int8.value());
  EXPECT_EQ(precision["reduced_products"], 2) << precision.dump();
  EXPECT_EQ(product_precision(precision, "classifier"), "int8");
  EXPECT_EQ(product_precision(precision, "conv"), "int8");
  for (uint64_t seed : {31, 32}) {
    const Tensor x = input(seed);
    // Per-tensor uint8 inputs (255 steps over the range) and per-channel int8 weights: each factor
    // within half a step; over 72 and 576 products of random signs that stays inside 5e-2 of the
    // largest score.
    EXPECT_LT(relative_difference(run(*int8.value(), x), run(*fp32.value(), x)), 5e-2);
  }
}

// y = Conv_up(Relu(Conv_dw(Relu(Conv_down(x[1, 8, 6, 6]))))): a depthwise convolution between two
// 1x1 convolutions (MobileNetV2's inverted residual, without the sum).
std::string depthwise_between_pointwise(const ScratchDir& dir) {
  ModelBuilder b;
  b.input("x", kFloat, {int64_t{1}, int64_t{8}, int64_t{6}, int64_t{6}});
  b.output("y", kFloat, {int64_t{1}, int64_t{8}, int64_t{6}, int64_t{6}});
  b.float_initializer("w_down", {16, 8, 1, 1}, random_values(128, 14, 0.3f));
  b.float_initializer("w_dw", {16, 1, 3, 3}, random_values(144, 15, 0.3f));
  b.float_initializer("w_up", {8, 16, 1, 1}, random_values(128, 16, 0.3f));
  b.node("Conv", {"x", "w_down"}, {"d"}, "down");
  b.node("Relu", {"d"}, {"dr"}, "relu_down");
  auto& conv = b.node("Conv", {"dr", "w_dw"}, {"e"}, "depthwise");
  ModelBuilder::ints_attribute(conv, "pads", {1, 1, 1, 1});
  ModelBuilder::int_attribute(conv, "group", 16);
  b.node("Relu", {"e"}, {"er"}, "relu_depthwise");
  b.node("Conv", {"er", "w_up"}, {"y"}, "up");
  return b.save(dir.file("depthwise.onnx"));
}

// A depthwise convolution stays fp32 under bf16, and under int8 where its input would be converted
// (memory-bound: the conversion would cost more than the products save), saying why; in static int8
// between two int8 convolutions, its input and output kept uint8, it computes in int8 too.
TEST(ReducedPrecision, DepthwiseConvolutionsTakeInt8OnlyBetweenUint8Values) {
  ScratchDir dir("precision");
  const std::string model = depthwise_between_pointwise(dir);
  const auto memory_bound = [](const nlohmann::json& precision) {
    return product_entry(precision, "depthwise")["reason"].get<std::string>().find("memory-bound") != std::string::npos;
  };
  std::vector<std::string> precisions = {"int8"};
  if (testing::test_target().bf16()) precisions.push_back("bf16");
  for (const std::string& p : precisions) {  // dynamic int8: nothing is kept uint8
    auto session = Session::load(model, options_for(p));
    ASSERT_TRUE(session.is_ok()) << session.status().to_string();
    const nlohmann::json precision = precision_of(*session.value());
    EXPECT_EQ(precision["reduced_products"], 2) << p;
    EXPECT_TRUE(memory_bound(precision)) << precision.dump();
  }
  SessionOptions o = options_for("int8");
  for (uint64_t seed = 17; seed < 20; ++seed)
    o.calibration_inputs.push_back({"calib-" + std::to_string(seed), {{"x", random_tensor(DType::kFloat, {1, 8, 6, 6}, seed)}}});
  auto fp32 = Session::load(model, options_for("fp32"));
  auto int8 = Session::load(model, o);
  ASSERT_TRUE(fp32.is_ok() && int8.is_ok()) << int8.status().to_string();
  const nlohmann::json precision = precision_of(*int8.value());
  EXPECT_EQ(precision["reduced_products"], 3) << precision.dump();
  EXPECT_EQ(product_precision(precision, "depthwise"), "int8");
  EXPECT_EQ(precision["uint8_values"].size(), 2u) << "its input and its output";
  for (uint64_t seed : {21, 22}) {
    const Tensor x = random_tensor(DType::kFloat, {1, 8, 6, 6}, seed);
    auto want = fp32.value()->run({{"x", x}});
    auto got = int8.value()->run({{"x", x}});
    ASSERT_TRUE(want.is_ok() && got.is_ok()) << got.status().to_string();
    // Three quantized inputs into sums of 8, 9 and 16 products, calibrated on three random sets
    // (values beyond their range saturate): within 1e-1 of the largest output (4e-2 measured with
    // the depthwise one in int8 and in fp32 alike, on one such input).
    EXPECT_LT(relative_difference(got.value().at("y"), want.value().at("y")), 1e-1);
  }
  // Kept in fp32, the last convolution reads a float32 value: the depthwise one goes back to fp32.
  o.keep_fp32 = {"up"};
  auto kept = Session::load(model, o);
  ASSERT_TRUE(kept.is_ok()) << kept.status().to_string();
  const nlohmann::json kept_precision = precision_of(*kept.value());
  EXPECT_EQ(kept_precision["reduced_products"], 1) << kept_precision.dump();
  EXPECT_TRUE(memory_bound(kept_precision)) << kept_precision.dump();
  EXPECT_FALSE(kept_precision.contains("uint8_values")) << "down's output is read by an fp32 product";
}

// Weights int8 cannot hold (an infinity, a NaN) keep their product fp32, saying why: quantized, they
// would become finite numbers and the output silently wrong.
TEST(ReducedPrecision, Int8KeepsProductsWithNonFiniteWeightsInFp32) {
  ScratchDir dir("precision");
  ModelBuilder b;
  b.input("x", kFloat, {int64_t{2}, int64_t{4}});
  b.output("y", kFloat, {int64_t{2}, int64_t{3}});
  b.float_initializer("w", {4, 3}, {0.1f, -0.2f, std::numeric_limits<float>::infinity(), 0.4f, 0.5f, 0.6f, -0.7f, 0.8f, 0.9f, 1.0f, 1.1f, -1.2f});
  b.node("MatMul", {"x", "w"}, {"y"}, "dense");
  auto session = Session::load(b.save(dir.file("infinite.onnx")), options_for("int8"));
  ASSERT_TRUE(session.is_ok()) << session.status().to_string();
  const nlohmann::json precision = precision_of(*session.value());
  EXPECT_EQ(precision["reduced_products"], 0);
  EXPECT_NE(precision["products"][0]["reason"].get<std::string>().find("infinite or NaN"), std::string::npos) << precision.dump();
}

TEST(ReducedPrecision, KeepFp32ByNodeNameOrOpTypeAndRefusesNamesTheGraphLacks) {
  ScratchDir dir("precision");
  const std::string model = classifier(dir);
  for (const std::string kept : {"classifier", "Gemm"}) {
    SessionOptions o = options_for("int8");
    o.keep_fp32 = {kept};
    auto session = Session::load(model, o);
    ASSERT_TRUE(session.is_ok()) << session.status().to_string();
    const nlohmann::json precision = precision_of(*session.value());
    EXPECT_EQ(precision["reduced_products"], 1) << kept;
    EXPECT_EQ(product_precision(precision, "classifier"), "fp32") << kept;
    EXPECT_EQ(product_precision(precision, "conv"), "int8") << kept;
  }
  SessionOptions o = options_for("int8");
  o.keep_fp32 = {"no_such_node"};
  auto refused = Session::load(model, o);
  ASSERT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("no_such_node"), std::string::npos) << refused.status().message();
}

TEST(ReducedPrecision, BadOptionsAreInvalidArguments) {
  ScratchDir dir("precision");
  const std::string model = classifier(dir);
  const auto refused = [&](SessionOptions o, const std::string& named) {
    auto session = Session::load(model, o);
    EXPECT_EQ(session.status().code(), StatusCode::kInvalidArgument) << session.status().to_string();
    EXPECT_NE(session.status().message().find(named), std::string::npos) << session.status().message();
  };
  refused(options_for("fp64"), "fp64");
  SessionOptions budget_without_precision = options_for("fp32");
  budget_without_precision.accuracy_budget = "rel=0.1";
  refused(budget_without_precision, "reduced precision");
  SessionOptions unknown_policy = options_for("int8");
  unknown_policy.on_budget = "retry";
  refused(unknown_policy, "retry");
  SessionOptions fallback_without_budget = options_for("int8");
  fallback_without_budget.on_budget = "fallback";
  refused(fallback_without_budget, "needs an accuracy budget");
  for (const std::string budget : {"rel", "rel=x", "cos=2", "top1=-0.5", "speed=1", "rel=nan"}) {
    SessionOptions o = options_for("int8");
    o.accuracy_budget = budget;
    refused(o, budget.substr(0, budget.find('=')));
  }
}

TEST(ReducedPrecision, ABudgetTheMeasurementBreaksFailsTheLoadNamingOutputAndMeasure) {
  ScratchDir dir("precision");
  const std::string model = classifier(dir);
  SessionOptions strict = options_for("int8");
  strict.accuracy_budget = "rel=1e-9";
  auto broken = Session::load(model, strict);
  ASSERT_EQ(broken.status().code(), StatusCode::kNumericalIssue) << broken.status().to_string();
  for (const char* part : {"scores", "relative error", "rel=1e-09"})
    EXPECT_NE(broken.status().message().find(part), std::string::npos) << broken.status().message();
  SessionOptions loose = options_for("int8");
  loose.accuracy_budget = "rel=0.5,cos=0.9,top1=0.5";
  EXPECT_TRUE(Session::load(model, loose).is_ok());
}

// y1 = x . W1 and y2 = z . W2 (and y3.. = z . W3.. with `plain` > 1), int8 matrix products; W1's
// first row is zero, and the validation input x has 1000 in its first column: per-tensor uint8 then
// spends its 255 steps on a value W1 ignores and rounds the rest of x to zero, so y1 in int8 is lost
// while the others stay close. `noise` (RandomUniformLike without a seed: new values on every run)
// adds an output no precision can keep.
std::string outlier_products(const ScratchDir& dir, bool noise, int plain = 1) {
  ModelBuilder b;
  b.input("x", kFloat, {int64_t{4}, int64_t{16}});
  b.input("z", kFloat, {int64_t{4}, int64_t{16}});
  b.output("y1", kFloat, {int64_t{4}, int64_t{8}});
  std::vector<float> w1 = random_values(16 * 8, 61, 0.5f);
  std::fill(w1.begin(), w1.begin() + 8, 0.0f);
  b.float_initializer("w1", {16, 8}, w1);
  b.node("MatMul", {"x", "w1"}, {"y1"}, "dense_outlier");
  for (int i = 0; i < plain; ++i) {
    const std::string k = std::to_string(i + 2);
    b.output("y" + k, kFloat, {int64_t{4}, int64_t{8}});
    b.float_initializer("w" + k, {16, 8}, random_values(16 * 8, 62 + 100 * i, 0.5f));
    b.node("MatMul", {"z", "w" + k}, {"y" + k}, i == 0 ? "dense_plain" : "dense_plain_" + k);
  }
  if (noise) {
    b.output("noise", kFloat, {int64_t{4}, int64_t{16}});
    b.node("RandomUniformLike", {"z"}, {"noise"}, "noise");
  }
  return b.save(dir.file("products_" + std::to_string(plain) + (noise ? "_noisy" : "") + ".onnx"));
}

SessionOptions fallback_options(const std::string& budget) {
  SessionOptions o = options_for("int8");
  Tensor x = random_tensor(DType::kFloat, {4, 16}, 63);
  for (int64_t row = 0; row < 4; ++row) x.data<float>()[row * 16] = 1000;
  o.validation_inputs = {{"outlier", {{"x", x}, {"z", random_tensor(DType::kFloat, {4, 16}, 64)}}}};
  o.accuracy_budget = budget;
  o.on_budget = "fallback";
  return o;
}

TEST(ReducedPrecision, OnBudgetFallbackKeepsTheMostSensitiveProductsInFp32UntilTheBudgetHolds) {
  ScratchDir dir("precision");
  const std::string model = outlier_products(dir, false);
  SessionOptions failing = fallback_options("cos=0.999");
  failing.on_budget = "fail";
  auto broken = Session::load(model, failing);
  ASSERT_EQ(broken.status().code(), StatusCode::kNumericalIssue) << broken.status().to_string();
  EXPECT_NE(broken.status().message().find("y1"), std::string::npos) << broken.status().message();

  auto session = Session::load(model, fallback_options("cos=0.999"));
  ASSERT_TRUE(session.is_ok()) << session.status().to_string();
  const nlohmann::json precision = precision_of(*session.value());
  EXPECT_EQ(product_precision(precision, "dense_outlier"), "fp32") << precision.dump();
  EXPECT_EQ(product_precision(precision, "dense_plain"), "int8") << precision.dump();
  for (const auto& p : precision["products"]) {
    if (p["node"] == "dense_outlier") {
      EXPECT_NE(p["reason"].get<std::string>().find("accuracy fallback"), std::string::npos) << p.dump();
    }
  }
  for (const auto& output : precision["accuracy"]["outputs"]) EXPECT_GE(output["cosine"].get<double>(), 0.999) << output.dump();
  const std::vector<std::string> steps = precision["fallback"];
  ASSERT_FALSE(steps.empty()) << precision.dump();
  EXPECT_NE(steps.back().find("kept 1 of 2 products in fp32: dense_outlier"), std::string::npos) << precision.dump();
  EXPECT_NE(session.value()->report_summary().find("fallback kept 1 of 2"), std::string::npos) << session.value()->report_summary();

  // A budget the measurement keeps needs no fallback.
  auto loose = Session::load(model, fallback_options("cos=-1"));
  ASSERT_TRUE(loose.is_ok()) << loose.status().to_string();
  EXPECT_FALSE(precision_of(*loose.value()).contains("fallback"));
}

// Beyond 16 products the fallback measures groups of consecutive ones: a bounded number of loads.
TEST(ReducedPrecision, OnBudgetFallbackMeasuresGroupsOfManyProducts) {
  ScratchDir dir("precision");
  auto session = Session::load(outlier_products(dir, false, 19), fallback_options("cos=0.999"));
  ASSERT_TRUE(session.is_ok()) << session.status().to_string();
  const nlohmann::json precision = precision_of(*session.value());
  const std::vector<std::string> steps = precision["fallback"];
  EXPECT_EQ(steps[1], "20 products measured in 16 groups of consecutive ones") << precision.dump();
  // The outlier's group (dense_outlier and dense_plain) is the one kept: 18 of 20 stay int8.
  EXPECT_NE(steps.back().find("kept 2 of 20 products in fp32: dense_outlier, dense_plain"), std::string::npos) << precision.dump();
  EXPECT_EQ(precision["reduced_products"], 18);
  EXPECT_EQ(product_precision(precision, "dense_plain_20"), "int8");
}

TEST(ReducedPrecision, OnBudgetFallbackSaysWhenEvenFp32CannotKeepTheBudget) {
  ScratchDir dir("precision");
  auto session = Session::load(outlier_products(dir, true), fallback_options("cos=0.999"));
  ASSERT_EQ(session.status().code(), StatusCode::kNumericalIssue) << session.status().to_string();
  for (const char* part : {"impossible", "every product in fp32", "noise"})
    EXPECT_NE(session.status().message().find(part), std::string::npos) << session.status().message();
}

TEST(ReducedPrecision, ValidationInputsAreCheckedAndNamed) {
  ScratchDir dir("precision");
  const std::string model = classifier(dir);
  const auto refused = [&](std::map<std::string, Tensor> tensors, const std::vector<std::string>& named) {
    SessionOptions o = options_for("int8");
    o.validation_inputs = {{"set-a", std::move(tensors)}};
    auto session = Session::load(model, o);
    EXPECT_EQ(session.status().code(), StatusCode::kInvalidArgument) << session.status().to_string();
    for (const std::string& part : named)
      EXPECT_NE(session.status().message().find(part), std::string::npos) << session.status().message();
  };
  refused({{"image", input(1)}}, {"set-a", "image"});
  refused({{"x", random_tensor(DType::kDouble, {2, 8, 6, 6}, 1)}}, {"set-a", "x"});
  refused({{"x", random_tensor(DType::kFloat, {2, 8, 5, 6}, 1)}}, {"set-a", "x"});
  refused({}, {"set-a", "no input"});
  Tensor nan = Tensor::allocate(DType::kFloat, {2, 8, 6, 6});
  for (int64_t i = 0; i < nan.element_count(); ++i) nan.data<float>()[i] = std::numeric_limits<float>::quiet_NaN();
  refused({{"x", nan}}, {"set-a", "'x' is all NaN"});

  SessionOptions given = options_for("int8");
  given.validation_inputs = {{"one", {{"x", input(41)}}}, {"two", {{"x", input(42)}}}};
  auto session = Session::load(model, given);
  ASSERT_TRUE(session.is_ok()) << session.status().to_string();
  const nlohmann::json accuracy = precision_of(*session.value())["accuracy"];
  EXPECT_EQ(accuracy["validation_inputs"], "given");
  EXPECT_EQ(accuracy["validation_count"], 2);
  EXPECT_EQ(accuracy["validation_sha256"].get<std::string>().size(), 64u);
}

std::vector<InputSet> calibration_sets() {
  std::vector<InputSet> sets;
  for (uint64_t seed = 61; seed < 65; ++seed) sets.push_back({"calib-" + std::to_string(seed), {{"x", input(seed)}}});
  return sets;
}

TEST(ReducedPrecision, StaticInt8CalibratesEachProductsInputOnTheCalibrationSets) {
  ScratchDir dir("precision");
  const std::string model = classifier(dir);
  auto fp32 = Session::load(model, options_for("fp32"));
  ASSERT_TRUE(fp32.is_ok()) << fp32.status().to_string();
  // The convolution reads the model's input: min-max over the sets, 0 included, is its range.
  float low = 0, high = 0;
  for (const InputSet& set : calibration_sets()) {
    const Tensor& x = set.tensors.at("x");
    for (int64_t i = 0; i < x.element_count(); ++i) {
      low = std::min(low, x.data<float>()[i]);
      high = std::max(high, x.data<float>()[i]);
    }
  }
  for (const char* method : {"minmax", "percentile", "entropy"}) {
    SessionOptions o = options_for("int8");
    o.calibration_inputs = calibration_sets();
    o.calibration_method = method;
    auto session = Session::load(model, o);
    ASSERT_TRUE(session.is_ok()) << method << ": " << session.status().to_string();
    const nlohmann::json precision = precision_of(*session.value());
    const nlohmann::json& calibration = precision["calibration"];
    EXPECT_EQ(calibration["method"], method);
    EXPECT_EQ(calibration["count"], 4);
    EXPECT_EQ(calibration["sha256"].get<std::string>().size(), 64u);
    EXPECT_EQ(calibration["calibrated_products"], 2) << precision.dump();
    EXPECT_EQ(precision["accuracy"]["validation_inputs"], "calibration") << "no validation inputs given: the calibration sets";
    const nlohmann::json& conv = product_entry(precision, "conv")["input_quantization"];
    ASSERT_TRUE(conv.is_object()) << precision.dump();
    const float scale = conv["scale"].get<float>();
    const int zero_point = conv["zero_point"].get<int>();
    if (std::string(method) == "minmax") {
      EXPECT_FLOAT_EQ(scale, (high - low) / 255.0f);
      EXPECT_EQ(zero_point, static_cast<int>(std::nearbyint(-low / ((high - low) / 255.0f))));
    } else {  // a narrower range, never a wider one
      EXPECT_LE(scale, (high - low) / 255.0f * 1.0001f) << method;
      EXPECT_GT(scale, (high - low) / 255.0f / 4) << method;
    }
    EXPECT_TRUE(product_entry(precision, "classifier")["input_quantization"].is_object()) << precision.dump();
    // Fixed scales from other inputs of the same distribution: within the dynamic form's bound.
    for (uint64_t seed : {71, 72}) {
      const Tensor x = input(seed);
      EXPECT_LT(relative_difference(run(*session.value(), x), run(*fp32.value(), x)), 5e-2) << method;
    }
  }
}

TEST(ReducedPrecision, CalibrationInputsAreCheckedAndNamed) {
  ScratchDir dir("precision");
  const std::string model = classifier(dir);
  const auto refused = [&](SessionOptions o, const std::vector<std::string>& named) {
    auto session = Session::load(model, o);
    EXPECT_EQ(session.status().code(), StatusCode::kInvalidArgument) << session.status().to_string();
    for (const std::string& part : named)
      EXPECT_NE(session.status().message().find(part), std::string::npos) << session.status().message();
  };
  const auto with_set = [&](std::map<std::string, Tensor> tensors) {
    SessionOptions o = options_for("int8");
    o.calibration_inputs = calibration_sets();
    o.calibration_inputs.push_back({"calib-bad", std::move(tensors)});
    return o;
  };
  refused(with_set({{"image", input(1)}}), {"calib-bad", "image"});
  refused(with_set({{"x", random_tensor(DType::kDouble, {2, 8, 6, 6}, 1)}}), {"calib-bad", "x"});
  refused(with_set({{"x", random_tensor(DType::kFloat, {2, 8, 5, 6}, 1)}}), {"calib-bad", "x"});
  refused(with_set({}), {"calib-bad", "no input"});
  Tensor nan = Tensor::allocate(DType::kFloat, {2, 8, 6, 6});
  for (int64_t i = 0; i < nan.element_count(); ++i) nan.data<float>()[i] = std::numeric_limits<float>::quiet_NaN();
  refused(with_set({{"x", nan}}), {"calib-bad", "'x' is all NaN"});
  SessionOptions method = options_for("int8");
  method.calibration_inputs = calibration_sets();
  method.calibration_method = "median";
  refused(method, {"calibration_method 'median'", "minmax"});
  for (const char* precision : {"fp32", "bf16"}) {
    if (std::string(precision) == "bf16" && !testing::test_target().bf16()) continue;  // unsupported_target first
    SessionOptions o = options_for(precision);
    o.calibration_inputs = calibration_sets();
    refused(o, {"calibrat", "int8", precision});
  }
}

TEST(ReducedPrecision, AnArtifactKeepsTheCalibratedScales) {
  ScratchDir dir("precision");
  const std::string model = classifier(dir);
  SessionOptions o = options_for("int8");
  o.calibration_inputs = calibration_sets();
  auto compiled = Session::load(model, o);
  ASSERT_TRUE(compiled.is_ok()) << compiled.status().to_string();
  ASSERT_TRUE(compiled.value()->write_artifact(dir.file("static.kiln")).is_ok());
  SessionOptions plain;
  plain.isa = testing::test_isa();
  auto loaded = Session::load(dir.file("static.kiln"), plain);
  ASSERT_TRUE(loaded.is_ok()) << loaded.status().to_string();
  const nlohmann::json was = precision_of(*compiled.value()), is = precision_of(*loaded.value());
  SessionOptions again = plain;
  again.calibration_inputs = calibration_sets();
  auto recalibrated = Session::load(dir.file("static.kiln"), again);
  EXPECT_EQ(recalibrated.status().code(), StatusCode::kInvalidArgument) << recalibrated.status().to_string();
  EXPECT_NE(recalibrated.status().message().find("when compiling"), std::string::npos) << recalibrated.status().message();
  EXPECT_EQ(product_entry(is, "conv")["input_quantization"], product_entry(was, "conv")["input_quantization"]) << is.dump();
  const Tensor x = input(81);
  EXPECT_EQ(relative_difference(run(*loaded.value(), x), run(*compiled.value(), x)), 0.0) << "same machine, same kernels";
}

TEST(ReducedPrecision, AutoTimesFp32AndEachPrecisionTheTargetHasAndKeepsTheFastestWithinBudget) {
  ScratchDir dir("precision");
  const std::string model = classifier(dir);
  auto session = Session::load(model, options_for("auto"));
  ASSERT_TRUE(session.is_ok()) << session.status().to_string();
  const nlohmann::json trials = precision_of(*session.value())["auto_trials"];
  const size_t tried = testing::test_target().bf16() ? 3 : 2;  // fp32, int8+bf16 and bf16; fp32 and int8
  ASSERT_EQ(trials.size(), tried + 1) << trials.dump();
  EXPECT_EQ(trials[0].get<std::string>().rfind("fp32: ", 0), 0u) << trials.dump();
  EXPECT_NE(trials[1].get<std::string>().find("within cos=0.995"), std::string::npos) << trials.dump();
  EXPECT_EQ(trials.back().get<std::string>().rfind("chosen: ", 0), 0u) << trials.dump();

  SessionOptions impossible = options_for("auto");
  impossible.accuracy_budget = "abs=0";  // no reduced precision keeps every output bit-exact
  auto fp32 = Session::load(model, impossible);
  ASSERT_TRUE(fp32.is_ok()) << fp32.status().to_string();
  const nlohmann::json precision = precision_of(*fp32.value());
  EXPECT_EQ(precision["requested"], "fp32");
  EXPECT_EQ(precision["auto_trials"].back(), "chosen: fp32 (the fastest)") << precision["auto_trials"].dump();
}

TEST(ReducedPrecision, AnArtifactKeepsEachProductsPrecisionAndItsOutputs) {
  ScratchDir dir("precision");
  const std::string model = classifier(dir);
  auto compiled = Session::load(model, options_for("int8"));
  ASSERT_TRUE(compiled.is_ok()) << compiled.status().to_string();
  ASSERT_TRUE(compiled.value()->write_artifact(dir.file("classifier.kiln")).is_ok());
  SessionOptions o;
  o.isa = testing::test_isa();
  auto loaded = Session::load(dir.file("classifier.kiln"), o);
  ASSERT_TRUE(loaded.is_ok()) << loaded.status().to_string();
  const nlohmann::json precision = precision_of(*loaded.value());
  EXPECT_EQ(precision["requested"], "int8");
  EXPECT_EQ(product_precision(precision, "classifier"), "int8");
  const Tensor x = input(51);
  EXPECT_EQ(relative_difference(run(*loaded.value(), x), run(*compiled.value(), x)), 0.0) << "same machine, same kernels";
}

}  // namespace
}  // namespace kiln
