// Tests of operator resolution: opsets past the newest Kiln supports are refused, and every ai.onnx
// op version of opsets 18-21 is registered, so that no node of a newer opset runs with an older
// version's meaning.
#include "kiln/ops/op_registry.h"

#include <gtest/gtest.h>

#include "ops/family_test_util.h"

namespace kiln::ops {
namespace {

using namespace testing;

TEST(OpRegistry, OpsetsPastTheNewestSupportedAreRefused) {
  const Tensor x = floats({1, 1, 2, 2}, {1, 2, 3, 4});
  EXPECT_NE(run_error("Relu", {&x}, {}, 22).find("newer than Kiln supports (21)"), std::string::npos);
  EXPECT_EQ(run_error("Relu", {&x}, {}, 21), "");  // Relu-14 is the newest Relu
}

// The operator versions opsets 18 to 21 introduced (ONNX's Changelog.md, opsets 18-21; new ops and
// changed ones): each must be what an opset-21 model resolves to, unless a later version in this
// table replaces it. The versions that only add types Kiln does not have (float8, int4) are
// registered too, refusing those types by name.
TEST(OpRegistry, EveryOperatorVersionOfOpsets18To21IsRegistered) {
  const std::map<std::string, int> newest = {
      {"AffineGrid", 20},          {"AveragePool", 19},     {"BitwiseAnd", 18},       {"BitwiseNot", 18},
      {"BitwiseOr", 18},           {"BitwiseXor", 18},      {"Cast", 21},             {"CastLike", 21},
      {"CenterCropPad", 18},       {"Col2Im", 18},          {"Constant", 21},         {"ConstantOfShape", 21},
      {"DeformConv", 19},          {"DequantizeLinear", 21}, {"DFT", 20},             {"Equal", 19},
      {"Flatten", 21},             {"Gelu", 20},            {"GridSample", 20},       {"GroupNormalization", 21},
      {"Identity", 21},            {"If", 21},              {"IsInf", 20},            {"IsNaN", 20},
      {"Loop", 21},                {"LpPool", 18},          {"Mish", 18},             {"OptionalGetElement", 18},
      {"OptionalHasElement", 18},  {"Pad", 21},             {"QLinearMatMul", 21},    {"QuantizeLinear", 21},
      {"ReduceL1", 18},            {"ReduceL2", 18},        {"ReduceLogSum", 18},     {"ReduceLogSumExp", 18},
      {"ReduceMax", 20},           {"ReduceMean", 18},      {"ReduceMin", 20},        {"ReduceProd", 18},
      {"ReduceSumSquare", 18},     {"Reshape", 21},         {"Resize", 19},           {"Scan", 21},
      {"ScatterElements", 18},     {"ScatterND", 18},       {"Shape", 21},            {"Size", 21},
      {"Split", 18},               {"Squeeze", 21},         {"Transpose", 21},        {"Unsqueeze", 21}};
  const OpRegistry& registry = OpRegistry::global();
  for (const auto& [op, version] : newest) {
    const OpDef* def = registry.find("", op, 21);
    ASSERT_NE(def, nullptr) << op << " is not registered";
    EXPECT_EQ(def->since_version, version) << op << "-" << version << " is not registered";
  }
}

TEST(OpRegistry, GridSample20TakesTheNewModeNames) {
  const Tensor x = floats({1, 1, 2, 2}, {1, 2, 3, 4});
  const Tensor grid = floats({1, 2, 2, 2}, {0, 0, 0.5f, 0.5f, -0.5f, 0, 1, 1});
  EXPECT_EQ(run_error("GridSample", {&x, &grid}, {}, 16), "");
  EXPECT_EQ(run_error("GridSample", {&x, &grid}, {}, 20), "");
  EXPECT_NE(run_error("GridSample", {&x, &grid}, {{"mode", ir::Attribute::of_string("bilinear")}}, 20).find("unknown mode 'bilinear'"),
            std::string::npos);
  EXPECT_NE(run_error("GridSample", {&x, &grid}, {{"mode", ir::Attribute::of_string("linear")}}, 16).find("unknown mode 'linear'"),
            std::string::npos);
}

}  // namespace
}  // namespace kiln::ops
