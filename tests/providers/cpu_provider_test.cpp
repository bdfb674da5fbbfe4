// Tests of the cpu provider: every standard case of the ops it accelerates runs on it (not
// declined) and matches cpu_ref, but for the layouts its target has no vector kernels for; what it
// declines, it declines with a reason.
#include "kiln/providers/cpu/cpu_provider.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "kiln/session.h"
#include "kiln/providers/registry/provider_registry.h"
#include "support/test_target.h"
#include "support/differential.h"
#include "support/model_builder.h"
#include "support/op_cases.h"

namespace kiln::testing {
namespace {

using A = ir::Attribute;
using kiln::testing::ModelBuilder;
using kiln::testing::ScratchDir;

const std::set<std::string> kAccelerated = {
    "Conv", "MatMul", "Gemm", "MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool", "kiln.FusedConv", "Relu",
    "Sigmoid", "Tanh", "Exp", "Neg", "Abs", "HardSwish", "Softplus", "Add", "Sub", "Mul", "Div", "Max", "Min", "Softmax",
    "LayerNormalization", "Transpose", "Slice", "Concat", "kiln.FusedMatMul", "kiln.Attention", "Gather", "Expand", "BatchNormalization", "Resize", "ConvTranspose",
    "ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2", "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp", "ArgMax", "ArgMin",
    "Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "And", "Or", "Xor", "Not", "Where", "PRelu", "Cast", "Pad", "Split", "Clip", "ConstantOfShape", "Pow", "LSTM", "DynamicQuantizeLinear", "ConvInteger",
    "QuantizeLinear", "DequantizeLinear", "QLinearConv", "MatMulInteger", "QLinearMatMul",
    "Mish", "Gelu", "BitwiseAnd", "BitwiseOr", "BitwiseXor", "BitwiseNot", "GroupNormalization", "InstanceNormalization",
    "Erf", "Sin", "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh", "Floor", "Ceil", "Round", "Sign",
    "Reciprocal", "Softsign", "Selu", "Celu", "HardSigmoid", "ThresholdedRelu", "IsNaN", "IsInf", "Tile",
    "DepthToSpace", "SpaceToDepth", "GatherElements", "GatherND", "ScatterElements", "Scatter", "ScatterND", "TopK", "CumSum", "Mod", "BitShift", "Sum", "Mean", "Trilu", "EyeLike", "Range", "OneHot",
    "NonMaxSuppression", "NonZero", "Compress", "LpNormalization", "LRN", "GRU", "RNN", "Einsum", "ReverseSequence", "DFT", "STFT", "Shrink", "GridSample", "RoiAlign",
    "DeformConv", "Det", "AffineGrid", "MeanVarianceNormalization"};

// The ops whose cpu kernels move or compare elements of any numeric or bool dtype.
const std::set<std::string> kAnyDtype = {"Add", "Sub", "Mul", "Div", "Relu", "Exp", "MatMul", "Softmax", "ArgMax", "Gather", "Expand", "Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "And",
                                         "Or", "Xor", "Not", "Where", "PRelu", "Cast", "Pad", "Split", "ConstantOfShape", "Slice", "Pow", "Concat", "DynamicQuantizeLinear", "ConvInteger",
                                         "QuantizeLinear", "DequantizeLinear", "QLinearConv", "MatMulInteger", "QLinearMatMul",
                                         "BitwiseAnd", "BitwiseOr", "BitwiseXor", "BitwiseNot", "Sign", "Tile", "DepthToSpace", "SpaceToDepth",
                                         "GatherElements", "GatherND", "ScatterElements", "Scatter", "ScatterND", "TopK", "CumSum", "Mod", "BitShift", "Sum", "Mean", "Trilu", "EyeLike", "Range", "OneHot",
                                         "NonMaxSuppression", "NonZero", "Compress", "GRU", "RNN", "LSTM", "ReverseSequence"};

// float32 data, or any dtype for the data movement, comparison, logic, Cast and Pad kernels; bool masks of attention, Resize's
// int64 sizes, ReduceSum's int64 axes, RoiAlign's batch indices, DFT's and STFT's lengths and steps: the
// cases cpu must run.
bool runs_on_cpu(const OpCase& c) {
  if (kAnyDtype.count(c.op)) return true;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    const TensorSpec& t = c.inputs[i];
    if (t.omitted() || t.dtype == DType::kFloat) continue;
    if (t.dtype == DType::kBool && c.op == "kiln.Attention") continue;
    if (t.dtype == DType::kInt64 && (c.op == "Resize" || c.op == "ReduceSum" || c.op == "RoiAlign" || c.op == "DFT" || c.op == "STFT" || c.op == "AffineGrid") && i > 0)
      continue;
    return false;
  }
  return true;
}

const providers::Provider& cpu_provider() {
  static const std::shared_ptr<const providers::Provider> cpu = providers::CpuProvider::create({kiln::testing::test_target()}).value();
  return *cpu;
}

// Whether the cpu provider declines case `c` for its layouts: a convolution or pool computing in a
// layout that the provider's target runs no vector kernel in (NCHW16c on AVX2), or a convolution
// between two different non-plain layouts.
bool declined_for_layouts(const OpCase& c) {
  if (c.op != "kiln.FusedConv" && c.op != "kiln.InLayout") return false;
  auto layout = [&](const char* name, const std::string& otherwise) {
    const auto it = c.attributes.find(name);
    return it == c.attributes.end() ? otherwise : it->second.s;
  };
  const std::string output = layout("layout", "NCHW"), input = layout("input_layout", output);
  const std::vector<ops::ActivationLayout> fast = cpu_provider().graph_preferences().activation_layouts;
  for (const std::string& name : {output, input})
    if (name != "NCHW" && std::find(fast.begin(), fast.end(), ops::ActivationLayout::parse(name).value()) == fast.end()) return true;
  return input != output && input != "NCHW" && output != "NCHW";
}

TEST(CpuProvider, RunsAndMatchesEveryStandardCaseOfItsOps) {
  const providers::Provider& cpu = cpu_provider();
  int matched = 0;
  for (const OpCase& c : standard_op_cases()) {
    if (!kAccelerated.count(c.op) || !runs_on_cpu(c)) continue;
    const bool declined = declined_for_layouts(c);
    for (uint64_t seed : {5u, 6u}) {
      DifferentialResult r = check_against_reference(cpu, c, seed);
      EXPECT_EQ(r.verdict, declined ? Verdict::kDeclined : Verdict::kMatch) << c.label() << ": " << r.detail;
      matched += r.verdict == Verdict::kMatch;
    }
  }
  EXPECT_GE(matched, 180);
}

TEST(CpuProvider, DeclinesWithReasons) {
  const providers::Provider& cpu = cpu_provider();
  DifferentialResult conv64 =
      check_against_reference(cpu, {"Conv", 11, {{DType::kDouble, {1, 2, 5, 5}}, {DType::kDouble, {3, 2, 3, 3}, true}}}, 1);
  EXPECT_EQ(conv64.verdict, Verdict::kDeclined);
  EXPECT_NE(conv64.detail.find("is not float32"), std::string::npos) << conv64.detail;
}

// A form the tuned kernels decline (MaxPool's Indices output) runs the reference's loop on cpu,
// matching it, and the report names that implementation for the node.
TEST(CpuProvider, RareFormsRunTheReferencesLoopAndTheReportSaysSo) {
  DifferentialResult indices = check_against_reference(
      cpu_provider(), {"MaxPool", 12, {{DType::kFloat, {1, 1, 4, 4}}}, {{"kernel_shape", A::of_ints({2, 2})}}, 2}, 1);
  EXPECT_EQ(indices.verdict, Verdict::kMatch) << indices.detail;
  ScratchDir dir("cpu_reference_loop");
  ModelBuilder b(12);
  b.input("x", onnx::TensorProto::FLOAT, {int64_t{1}, int64_t{1}, int64_t{4}, int64_t{4}});
  b.output("y", onnx::TensorProto::FLOAT, {int64_t{1}, int64_t{1}, int64_t{2}, int64_t{2}});
  b.output("at", onnx::TensorProto::INT64, {int64_t{1}, int64_t{1}, int64_t{2}, int64_t{2}});
  onnx::NodeProto& pool = b.node("MaxPool", {"x"}, {"y", "at"}, "pool");
  onnx::AttributeProto* kernel = pool.add_attribute();
  kernel->set_name("kernel_shape");
  kernel->set_type(onnx::AttributeProto::INTS);
  kernel->add_ints(2);
  kernel->add_ints(2);
  onnx::AttributeProto* strides = pool.add_attribute();
  strides->CopyFrom(*kernel);
  strides->set_name("strides");
  SessionOptions options;
  options.providers = {"cpu"};
  auto session = Session::load(b.save(dir.file("pool.onnx")), options);
  ASSERT_TRUE(session.is_ok()) << session.status().to_string();
  std::vector<float> x(16);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 7) % 16);
  auto out = session.value()->run({{"x", Tensor::from_vector<float>(DType::kFloat, {1, 1, 4, 4}, x)}});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  EXPECT_EQ(std::vector<int64_t>(out.value().at("at").data<int64_t>(), out.value().at("at").data<int64_t>() + 4),
            (std::vector<int64_t>{4, 2, 9, 11}));  // x[i] = 7i mod 16: the maxima 12, 14, 15, 13 are there
  const auto report = nlohmann::json::parse(session.value()->report_json());
  EXPECT_EQ(report["target"]["node_implementations"]["pool"], "kiln:reference-loop") << report["target"];
}

// An embedding lookup whose token id is past the table: InvalidArgument naming the node, not a
// read out of bounds.
TEST(CpuProvider, GatherRejectsAnIndexOutOfRange) {
  ScratchDir dir("cpu_gather");
  ModelBuilder b(13);
  b.input("ids", onnx::TensorProto::INT64, {int64_t{3}});
  b.output("rows", onnx::TensorProto::FLOAT, {int64_t{3}, int64_t{2}});
  onnx::TensorProto* table = b.graph().add_initializer();
  table->set_name("table");
  table->set_data_type(onnx::TensorProto::FLOAT);
  table->add_dims(4);
  table->add_dims(2);
  for (int i = 0; i < 8; ++i) table->add_float_data(static_cast<float>(i));
  b.node("Gather", {"table", "ids"}, {"rows"}, "embedding");
  SessionOptions options;
  options.providers = {"cpu"};
  auto session = Session::load(b.save(dir.file("model.onnx")), options);
  ASSERT_TRUE(session.is_ok()) << session.status().to_string();
  auto ok = session.value()->run({{"ids", Tensor::from_vector<int64_t>(DType::kInt64, {3}, {3, -4, 1})}});
  ASSERT_TRUE(ok.is_ok()) << ok.status().to_string();
  EXPECT_EQ(ok.value().at("rows").data<float>()[0], 6.0f);
  EXPECT_EQ(ok.value().at("rows").data<float>()[2], 0.0f);
  auto bad = session.value()->run({{"ids", Tensor::from_vector<int64_t>(DType::kInt64, {3}, {0, 4, 1})}});
  ASSERT_FALSE(bad.is_ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument) << bad.status().to_string();
  EXPECT_NE(bad.status().message().find("embedding"), std::string::npos) << bad.status().to_string();
  EXPECT_NE(bad.status().message().find("index 4 is out of range"), std::string::npos) << bad.status().to_string();
}

// A MatMul of an activation with 0 rows (a batch of 0) gives an empty output and runs nothing:
// oneDNN's matmul primitive divides by zero when it is created for such dims (fuzz_session_run).
TEST(CpuProvider, NodesWithEmptyOutputsRunNothing) {
  ScratchDir dir("cpu_empty");
  ModelBuilder b(17);
  b.input("x", onnx::TensorProto::FLOAT, {std::string("batch"), int64_t{4}});
  b.float_initializer("w", {4, 2}, std::vector<float>(8, 1.0f));
  b.output("y", onnx::TensorProto::FLOAT, {std::string("batch"), int64_t{2}});
  b.node("MatMul", {"x", "w"}, {"y"}, "product");
  SessionOptions options;
  options.providers = {"cpu"};
  auto session = Session::load(b.save(dir.file("model.onnx")), options);
  ASSERT_TRUE(session.is_ok()) << session.status().to_string();
  auto out = session.value()->run({{"x", Tensor::allocate(DType::kFloat, {0, 4})}});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  EXPECT_EQ(out.value().at("y").shape(), (std::vector<int64_t>{0, 2}));
  const auto report = nlohmann::json::parse(session.value()->report_json());
  EXPECT_EQ(report["target"]["node_implementations"]["product"], "kiln:empty") << report["target"];
}

// A product over an empty inner dimension (K = 0) is not empty: MatMul gives zeros and Gemm gives
// beta * C, in graph and eager mode, with K known at load or only at run time.
TEST(CpuProvider, ProductsOverAnEmptyInnerDimensionAreZeroPlusBias) {
  ScratchDir dir("cpu_inner_empty");
  ModelBuilder b(17);
  b.input("a", onnx::TensorProto::FLOAT, {int64_t{2}, std::string("k")});
  b.input("b", onnx::TensorProto::FLOAT, {std::string("k"), int64_t{3}});
  b.float_initializer("c", {3}, {1.0f, 2.0f, 3.0f});
  b.output("product", onnx::TensorProto::FLOAT, {int64_t{2}, int64_t{3}});
  b.output("affine", onnx::TensorProto::FLOAT, {int64_t{2}, int64_t{3}});
  b.node("MatMul", {"a", "b"}, {"product"}, "matmul");
  onnx::AttributeProto* beta = b.node("Gemm", {"a", "b", "c"}, {"affine"}, "gemm").add_attribute();
  beta->set_name("beta");
  beta->set_type(onnx::AttributeProto::FLOAT);
  beta->set_f(2.0f);
  for (ExecutionMode mode : {ExecutionMode::kGraph, ExecutionMode::kEager}) {
    SessionOptions options;
    options.providers = {"cpu"};
    options.mode = mode;
    auto session = Session::load(b.save(dir.file("model.onnx")), options);
    ASSERT_TRUE(session.is_ok()) << session.status().to_string();
    auto out = session.value()->run({{"a", Tensor::allocate(DType::kFloat, {2, 0})}, {"b", Tensor::allocate(DType::kFloat, {0, 3})}});
    ASSERT_TRUE(out.is_ok()) << out.status().to_string();
    const Tensor& product = out.value().at("product");
    const Tensor& affine = out.value().at("affine");
    EXPECT_EQ(std::vector<float>(product.data<float>(), product.data<float>() + 6), std::vector<float>(6, 0.0f));
    EXPECT_EQ(std::vector<float>(affine.data<float>(), affine.data<float>() + 6),
              (std::vector<float>{2, 4, 6, 2, 4, 6}));
  }
}

// Attention over no keys (T = 0) has empty scores but not an empty Y (zeros): oneDNN is never
// handed the empty operands (its matmul descriptor fails), the reference's loop runs the node.
TEST(CpuProvider, AttentionOverNoKeysRunsTheReferencesLoop) {
  const DifferentialResult r = check_against_reference(
      cpu_provider(), {"kiln.Attention", 1, {{DType::kFloat, {2, 3, 7, 8}}, {DType::kFloat, {2, 3, 8, 0}}, {DType::kFloat, {2, 3, 0, 8}}}}, 1);
  EXPECT_EQ(r.verdict, Verdict::kMatch) << r.detail;
}

// LayerNormalization's scale and bias broadcast over the normalised dims (legal ONNX: a scalar
// scale must not fail closed), on the oneDNN primitive (large rows): a scale given at run time and
// a constant bias.
TEST(CpuProvider, LayerNormalizationBroadcastsScaleAndBiasOverTheNormalisedDims) {
  const DifferentialResult r = check_against_reference(
      cpu_provider(),
      {"LayerNormalization", 17, {{DType::kFloat, {64, 3, 70}}, {DType::kFloat, {3, 1}}, {DType::kFloat, {1}, true}}, {{"axis", A::of_int(1)}}}, 1);
  EXPECT_EQ(r.verdict, Verdict::kMatch) << r.detail;
}

// GatherElements, GatherND and ScatterND with an index past its axis: InvalidArgument naming the
// node, never a read or write out of bounds.
TEST(CpuProvider, IndexedKernelsRejectIndicesOutOfRange) {
  struct Case {
    std::string op;
    std::vector<int64_t> index_shape;
    std::vector<int64_t> good, bad;
  };
  for (const Case& c : {Case{"GatherElements", {2, 3}, {0, -4, 3, 1, 2, -1}, {0, 4, 3, 1, 2, -1}},
                        Case{"GatherND", {2, 1}, {3, -4}, {3, -5}}, Case{"ScatterND", {2, 1}, {1, 2}, {1, 9}}}) {
    ScratchDir dir("cpu_indexed");
    ModelBuilder b(16);
    b.input("indices", onnx::TensorProto::INT64, {c.index_shape[0], c.index_shape[1]});
    b.float_initializer("data", {4, 3}, std::vector<float>(12, 1.0f));
    b.float_initializer("updates", {2, 3}, std::vector<float>(6, 2.0f));
    const bool scatter = c.op == "ScatterND";
    b.output("y", onnx::TensorProto::FLOAT, {int64_t{c.op == "GatherElements" ? 2 : scatter ? 4 : 2}, int64_t{3}});
    b.node(c.op, scatter ? std::vector<std::string>{"data", "indices", "updates"} : std::vector<std::string>{"data", "indices"},
           {"y"}, "lookup");
    SessionOptions options;
    options.providers = {"cpu"};
    auto session = Session::load(b.save(dir.file("model.onnx")), options);
    ASSERT_TRUE(session.is_ok()) << c.op << ": " << session.status().to_string();
    auto ok = session.value()->run({{"indices", Tensor::from_vector<int64_t>(DType::kInt64, c.index_shape, c.good)}});
    EXPECT_TRUE(ok.is_ok()) << c.op << ": " << ok.status().to_string();
    auto bad = session.value()->run({{"indices", Tensor::from_vector<int64_t>(DType::kInt64, c.index_shape, c.bad)}});
    ASSERT_FALSE(bad.is_ok()) << c.op;
    EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument) << bad.status().to_string();
    EXPECT_NE(bad.status().message().find("lookup"), std::string::npos) << bad.status().to_string();
    EXPECT_NE(bad.status().message().find("out of range"), std::string::npos) << bad.status().to_string();
  }
}

// The ops of the registry the cpu provider has no kernel for yet, each with the reason; everything
// else must have one. The test fails both ways, so the list shrinks as kernels land.
std::map<std::string, std::string> ops_without_cpu_kernels() {
  std::map<std::string, std::string> missing;
  auto add = [&](const std::string& why, std::initializer_list<const char*> ops) {
    for (const char* op : ops) missing[op] = why;
  };
  add("expanded into backward ops when a session loads (autodiff/gradient_expansion): it never reaches a provider",
      {"ai.onnx.preview.training.Gradient"});
  return missing;
}

TEST(CpuProvider, HasAKernelForEveryOpOfTheRegistryButTheListedOnes) {
  auto cpu = providers::make_provider("cpu", {target::host_target()});
  ASSERT_TRUE(cpu.is_ok()) << cpu.status().to_string();
  const std::vector<std::string> have = cpu.value()->op_types();
  const std::map<std::string, std::string> missing = ops_without_cpu_kernels();
  std::set<std::string> registry;
  for (const auto& [key, versions] : ops::OpRegistry::global().listing()) {
    const std::string op = key.first.empty() ? key.second : key.first + "." + key.second;
    registry.insert(op);
    const bool has = std::find(have.begin(), have.end(), op) != have.end();
    EXPECT_TRUE(has || missing.count(op)) << op << " has no cpu kernel and is not listed with a reason";
    EXPECT_FALSE(has && missing.count(op)) << op << " has a cpu kernel now: take it off the list";
  }
  for (const auto& [op, why] : missing) EXPECT_TRUE(registry.count(op)) << op << " is listed but not in the registry";
}

}  // namespace
}  // namespace kiln::testing
