// Kiln's int8 products written in ONNX's quantization operators (frontend/onnx/quantized_export.h):
// the written model, run as plain ONNX, computes what Kiln's int8 session computes, dynamic or
// calibrated, matrix products and convolutions; what neither form can hold is listed with its
// reason; bad models are classified errors. The zoo's cross-check runs the
// written file on ONNX Runtime itself (tests/zoo/run_int8_export_case.py).
#include "kiln/frontend/onnx/quantized_export.h"

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <tuple>

#include "kiln/runtime/session_access.h"
#include "kiln/session.h"
#include "support/model_builder.h"
#include "support/tensor_compare.h"
#include "support/test_target.h"

namespace kiln::frontend {
namespace {

using testing::ModelBuilder;
using testing::relative_difference;
using testing::ScratchDir;
constexpr int kFloat = onnx::TensorProto::FLOAT;

std::vector<float> values(size_t count, uint64_t seed) {
  const Tensor t = random_tensor(DType::kFloat, {static_cast<int64_t>(count)}, seed);
  return {t.data<float>(), t.data<float>() + count};
}

// y[3, 4] = Gemm(MatMul(x[3, 6], w1[6, 5]), w2[4, 5], c2[4]; transB, alpha 0.5, beta 2): the MatMul
// has no name (Kiln's import calls it MatMul_0), the Gemm transposes its weights and scales both terms.
std::string two_products(const ScratchDir& dir, int64_t opset = 17) {
  ModelBuilder b(opset);
  b.input("x", kFloat, {int64_t{3}, int64_t{6}});
  b.output("y", kFloat, {int64_t{3}, int64_t{4}});
  b.float_initializer("w1", {6, 5}, values(30, 1));
  b.float_initializer("w2", {4, 5}, values(20, 2));
  b.float_initializer("c2", {4}, values(4, 3));
  b.node("MatMul", {"x", "w1"}, {"h"});
  auto& gemm = b.node("Gemm", {"h", "w2", "c2"}, {"y"}, "dense");
  ModelBuilder::int_attribute(gemm, "transB", 1);
  onnx::AttributeProto* alpha = gemm.add_attribute();
  alpha->set_name("alpha");
  alpha->set_type(onnx::AttributeProto::FLOAT);
  alpha->set_f(0.5f);
  onnx::AttributeProto* beta = gemm.add_attribute();
  beta->set_name("beta");
  beta->set_type(onnx::AttributeProto::FLOAT);
  beta->set_f(2.0f);
  return b.save(dir.file("two_products_" + std::to_string(opset) + ".onnx"));
}

SessionOptions options(const std::string& precision) {
  SessionOptions o;
  o.isa = testing::test_isa();
  o.precision = precision;
  return o;
}

std::vector<Int8Product> int8_products(const Session& session) {
  std::vector<Int8Product> products;
  for (const auto& p : SessionAccess::report(session).precision.products)
    if (p.precision == "int8")
      products.push_back({p.node, p.sources, p.weight_levels, p.input_scale, p.input_zero_point, p.residual_scale, p.residual_zero_point});
  return products;
}

std::vector<std::string> quantized_nodes(const QuantizedOnnx& written, QuantizedOnnx::Form form) {
  std::vector<std::string> nodes;
  for (const auto& q : written.quantized)
    if (q.form == form) nodes.push_back(q.node);
  return nodes;
}


// y[2, 10] = Gemm(Flatten(Relu(Conv(x[2, 4, 6, 6], w[8, 4, 3, 3], b, pads 1))), w2[288, 10], c2;
// transA 0): a convolution and a matrix product.
std::string conv_then_gemm(const ScratchDir& dir) {
  ModelBuilder b(17);
  b.input("x", kFloat, {int64_t{2}, int64_t{4}, int64_t{6}, int64_t{6}});
  b.output("y", kFloat, {int64_t{2}, int64_t{10}});
  b.float_initializer("w", {8, 4, 3, 3}, values(8 * 4 * 9, 21));
  b.float_initializer("b", {8}, values(8, 22));
  b.float_initializer("w2", {288, 10}, values(2880, 23));
  b.float_initializer("c2", {10}, values(10, 24));
  auto& conv = b.node("Conv", {"x", "w", "b"}, {"c"}, "conv");
  ModelBuilder::ints_attribute(conv, "pads", {1, 1, 1, 1});
  b.node("Relu", {"c"}, {"r"}, "relu");
  b.node("Flatten", {"r"}, {"f"}, "flatten");
  b.node("Gemm", {"f", "w2", "c2"}, {"y"}, "dense");
  return b.save(dir.file("conv_then_gemm.onnx"));
}

TEST(QuantizedExport, TheWrittenModelComputesWhatKilnsInt8Computes) {
  ScratchDir dir("quantized_export");
  const std::string model = two_products(dir);
  auto int8 = Session::load(model, options("int8"));
  ASSERT_TRUE(int8.is_ok()) << int8.status().to_string();
  const std::vector<Int8Product> products = int8_products(*int8.value());
  ASSERT_EQ(products.size(), 2u);
  auto written = quantized_onnx(model, products);
  ASSERT_TRUE(written.is_ok()) << written.status().to_string();
  EXPECT_EQ(quantized_nodes(*written, QuantizedOnnx::Form::kMatMulInteger).size(), 2u);
  EXPECT_TRUE(written->left_fp32.empty());

  onnx::ModelProto proto;
  ASSERT_TRUE(proto.ParseFromString(written->model));
  std::map<std::string, int> ops;
  for (const auto& node : proto.graph().node()) ++ops[node.op_type()];
  EXPECT_EQ(ops["DynamicQuantizeLinear"], 2);
  EXPECT_EQ(ops["MatMulInteger"], 2);
  EXPECT_EQ(ops["MatMul"] + ops["Gemm"], 0);
  for (const auto& init : proto.graph().initializer())
    EXPECT_TRUE(init.name() != "w1" && init.name() != "w2") << init.name() << ": the float weights are gone";

  const std::string path = dir.file("written.onnx");
  std::ofstream(path, std::ios::binary) << written->model;
  auto plain = Session::load(path, options("fp32"));
  ASSERT_TRUE(plain.is_ok()) << plain.status().to_string();
  for (uint64_t seed : {11, 12}) {
    const Tensor x = random_tensor(DType::kFloat, {3, 6}, seed);
    const Tensor want = int8.value()->run({{"x", x}}).value().at("y");
    const Tensor got = plain.value()->run({{"x", x}}).value().at("y");
    // The same uint8 inputs, int8 weights, exact int32 sums and scales: only float rounding differs.
    EXPECT_LT(relative_difference(got, want), 1e-5) << "seed " << seed;
  }
}

TEST(QuantizedExport, ConvolutionsAndCalibratedProductsTakeTheQdqFormAndComputeWhatKilnComputes) {
  ScratchDir dir("quantized_export");
  const std::string model = conv_then_gemm(dir);
  for (const bool calibrated : {false, true}) {
    SessionOptions o = options("int8");
    if (calibrated)
      for (uint64_t seed = 31; seed < 34; ++seed)
        o.calibration_inputs.push_back({"calib", {{"x", random_tensor(DType::kFloat, {2, 4, 6, 6}, seed)}}});
    auto int8 = Session::load(model, o);
    ASSERT_TRUE(int8.is_ok()) << int8.status().to_string();
    const std::vector<Int8Product> products = int8_products(*int8.value());
    ASSERT_EQ(products.size(), 2u);
    auto written = quantized_onnx(model, products);
    ASSERT_TRUE(written.is_ok()) << written.status().to_string();
    EXPECT_TRUE(written->left_fp32.empty());
    const std::vector<std::string> qdq = calibrated ? std::vector<std::string>{"conv", "dense"} : std::vector<std::string>{"conv"};
    EXPECT_EQ(quantized_nodes(*written, QuantizedOnnx::Form::kQdq), qdq);
    onnx::ModelProto proto;
    ASSERT_TRUE(proto.ParseFromString(written->model));
    std::map<std::string, int> ops;
    for (const auto& node : proto.graph().node()) ++ops[node.op_type()];
    EXPECT_EQ(ops["QuantizeLinear"], calibrated ? 2 : 0);
    EXPECT_EQ(ops["DynamicQuantizeLinear"], calibrated ? 0 : 2);
    // Each input and weights; static: each bias too, int32 at the accumulator's scale.
    EXPECT_EQ(ops["DequantizeLinear"], calibrated ? 6 : 2);
    EXPECT_EQ(ops["Conv"], 1) << "the node stays, reading dequantized inputs";

    const std::string path = dir.file(calibrated ? "static.onnx" : "dynamic.onnx");
    std::ofstream(path, std::ios::binary) << written->model;
    auto plain = Session::load(path, options("fp32"));
    ASSERT_TRUE(plain.is_ok()) << plain.status().to_string();
    for (uint64_t seed : {41, 42}) {
      Tensor x = random_tensor(DType::kFloat, {2, 4, 6, 6}, seed);
      if (calibrated) x.data<float>()[5] = 40.0f;  // beyond the calibrated range: saturates in both
      const Tensor want = int8.value()->run({{"x", x}}).value().at("y");
      const Tensor got = plain.value()->run({{"x", x}}).value().at("y");
      // The same uint8 codes and int8 weights: float rounding only, a code moved here and there.
      EXPECT_LT(relative_difference(got, want), 1e-4) << (calibrated ? "static" : "dynamic") << ", seed " << seed;
    }
  }
}

// y = Conv_d(s), s = Relu(Conv_c(t) + m), t = Relu(Conv_b(m)), m = MaxPool(Relu(Conv_a(x[1, 4, 8, 8])),
// 2x2, stride 2): a max pool, and a residual block over its output.
std::string pool_and_residual(const ScratchDir& dir) {
  ModelBuilder b(17);
  b.input("x", kFloat, {int64_t{1}, int64_t{4}, int64_t{8}, int64_t{8}});
  b.output("y", kFloat, {int64_t{1}, int64_t{4}, int64_t{4}, int64_t{4}});
  b.float_initializer("wa", {8, 4, 3, 3}, values(8 * 4 * 9, 51));
  b.float_initializer("wb", {8, 8, 3, 3}, values(8 * 8 * 9, 52));
  b.float_initializer("wc", {8, 8, 3, 3}, values(8 * 8 * 9, 53));
  b.float_initializer("wd", {4, 8, 1, 1}, values(4 * 8, 54));
  for (const auto& [in, w, out] : {std::tuple{"x", "wa", "ca"}, {"m", "wb", "cb"}, {"t", "wc", "cc"}}) {
    auto& conv = b.node("Conv", {in, w}, {out}, std::string("conv_") + w[1]);
    ModelBuilder::ints_attribute(conv, "pads", {1, 1, 1, 1});
  }
  b.node("Relu", {"ca"}, {"a"}, "relu_a");
  auto& pool = b.node("MaxPool", {"a"}, {"m"}, "pool");
  ModelBuilder::ints_attribute(pool, "kernel_shape", {2, 2});
  ModelBuilder::ints_attribute(pool, "strides", {2, 2});
  b.node("Relu", {"cb"}, {"t"}, "relu_b");
  b.node("Add", {"cc", "m"}, {"sum"}, "sum");
  b.node("Relu", {"sum"}, {"s"}, "relu_s");
  b.node("Conv", {"s", "wd"}, {"y"}, "conv_d");
  return b.save(dir.file("pool_and_residual.onnx"));
}

// Where Kiln keeps values uint8 through a max pool and as a residual, the export quantizes them
// alike: the MaxPool reads its input in its output's quantization, the Add its residual in the one
// Kiln sums it in (one QuantizeLinear for the pool's output, shared by conv_b and the Add); the
// written model computes what Kiln's int8 computes.
TEST(QuantizedExport, MaxPoolsAndResidualsReadWhatKilnKeepsUint8) {
  ScratchDir dir("quantized_export");
  const std::string model = pool_and_residual(dir);
  SessionOptions o = options("int8");
  for (uint64_t seed = 61; seed < 64; ++seed) o.calibration_inputs.push_back({"calib", {{"x", random_tensor(DType::kFloat, {1, 4, 8, 8}, seed)}}});
  auto int8 = Session::load(model, o);
  ASSERT_TRUE(int8.is_ok()) << int8.status().to_string();
  const std::vector<Int8Product> products = int8_products(*int8.value());
  ASSERT_EQ(products.size(), 4u);
  EXPECT_EQ(std::count_if(products.begin(), products.end(), [](const Int8Product& p) { return p.residual_scale > 0; }), 1);
  auto written = quantized_onnx(model, products);
  ASSERT_TRUE(written.is_ok()) << written.status().to_string();
  onnx::ModelProto proto;
  ASSERT_TRUE(proto.ParseFromString(written->model));
  std::map<std::string, int> ops;
  std::map<std::string, std::string> writer;
  for (const auto& node : proto.graph().node()) {
    ++ops[node.op_type()];
    for (const std::string& out : node.output()) writer[out] = node.op_type();
  }
  EXPECT_EQ(ops["QuantizeLinear"], 5) << "x, a, m, t, s";
  for (const auto& node : proto.graph().node()) {
    if (node.op_type() == "MaxPool") {
      EXPECT_EQ(writer[node.input(0)], "DequantizeLinear");
    } else if (node.op_type() == "Add") {
      EXPECT_EQ(writer[node.input(1)], "DequantizeLinear") << "the residual";
    }
  }
  const std::string path = dir.file("pool_and_residual_int8.onnx");
  std::ofstream(path, std::ios::binary) << written->model;
  auto plain = Session::load(path, options("fp32"));
  ASSERT_TRUE(plain.is_ok()) << plain.status().to_string();
  for (uint64_t seed : {71, 72}) {
    const Tensor x = random_tensor(DType::kFloat, {1, 4, 8, 8}, seed);
    const Tensor want = int8.value()->run({{"x", x}}).value().at("y");
    const Tensor got = plain.value()->run({{"x", x}}).value().at("y");
    EXPECT_LT(relative_difference(got, want), 1e-4) << "seed " << seed;
  }
}

// Below opset 13 DequantizeLinear has no axis: the weights dequantize by 1 and a Mul applies the
// per-channel scales, with the same float products.
TEST(QuantizedExport, BeforeOpset13TheWeightScalesAreAMul) {
  ScratchDir dir("quantized_export");
  const std::string model = two_products(dir, 12);
  SessionOptions o = options("int8");
  o.calibration_inputs.push_back({"calib", {{"x", random_tensor(DType::kFloat, {3, 6}, 51)}}});
  auto int8 = Session::load(model, o);
  ASSERT_TRUE(int8.is_ok()) << int8.status().to_string();
  auto written = quantized_onnx(model, int8_products(*int8.value()));
  ASSERT_TRUE(written.is_ok()) << written.status().to_string();
  EXPECT_EQ(quantized_nodes(*written, QuantizedOnnx::Form::kQdq).size(), 2u);
  EXPECT_TRUE(written->left_fp32.empty());
  onnx::ModelProto proto;
  ASSERT_TRUE(proto.ParseFromString(written->model));
  for (const auto& node : proto.graph().node())
    for (const auto& attribute : node.attribute()) EXPECT_NE(attribute.name(), "axis") << node.name();
  const std::string path = dir.file("opset12.onnx");
  std::ofstream(path, std::ios::binary) << written->model;
  auto plain = Session::load(path, options("fp32"));
  ASSERT_TRUE(plain.is_ok()) << plain.status().to_string();
  const Tensor x = random_tensor(DType::kFloat, {3, 6}, 52);
  EXPECT_LT(relative_difference(plain.value()->run({{"x", x}}).value().at("y"), int8.value()->run({{"x", x}}).value().at("y")), 1e-4);
}

TEST(QuantizedExport, ProductsTheFormCannotHoldAreListedAndBadModelsAreClassified) {
  ScratchDir dir("quantized_export");
  const std::string model = two_products(dir);
  auto written = quantized_onnx(model, {{"fused", {"dense"}}, {"body_product", {"inside_a_loop"}}, {"conv", {"MatMul_0_missing"}}});
  ASSERT_TRUE(written.is_ok()) << written.status().to_string();
  EXPECT_EQ(quantized_nodes(*written, QuantizedOnnx::Form::kMatMulInteger), std::vector<std::string>{"dense"});
  ASSERT_EQ(written->left_fp32.size(), 2u);
  EXPECT_NE(written->left_fp32[0].find("not in the main graph"), std::string::npos) << written->left_fp32[0];
  // Two of Kiln's products standing for one node (a product split over the inputs of the Concat it
  // reads, each with its own scales): the node stays as it was, both listed.
  auto split = quantized_onnx(model, {{"dense_part", {"dense"}}, {"dense_part_1", {"dense"}}});
  ASSERT_TRUE(split.is_ok()) << split.status().to_string();
  EXPECT_TRUE(split->quantized.empty());
  ASSERT_EQ(split->left_fp32.size(), 2u);
  EXPECT_NE(split->left_fp32[0].find("as 2 products"), std::string::npos) << split->left_fp32[0];

  const auto old_opset = quantized_onnx(two_products(dir, 10), {{"dense", {"dense"}}});
  EXPECT_EQ(old_opset.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(old_opset.status().message().find("opset 10"), std::string::npos) << old_opset.status().message();
  const std::string garbage = dir.file("garbage.onnx");
  std::ofstream(garbage, std::ios::binary) << "not a model";
  EXPECT_EQ(quantized_onnx(garbage, {}).status().code(), StatusCode::kInvalidModel);
  EXPECT_EQ(quantized_onnx(dir.file("absent.onnx"), {}).status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace kiln::frontend
