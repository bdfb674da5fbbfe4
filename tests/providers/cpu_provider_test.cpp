// Tests of the cpu provider: every standard case of the ops it accelerates runs on it (not
// declined) and matches cpu_ref; what it declines, it declines with a reason.
#include "kiln/providers/cpu/cpu_provider.h"

#include <gtest/gtest.h>

#include <set>

#include "support/differential.h"
#include "support/op_cases.h"

namespace kiln::testing {
namespace {

using A = ir::Attribute;

const std::set<std::string> kAccelerated = {
    "Conv", "MatMul", "Gemm", "MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool", "kiln.FusedConv", "Relu",
    "Sigmoid", "Tanh", "Exp", "Neg", "Abs", "HardSwish", "Softplus", "Add", "Sub", "Mul", "Div", "Max", "Min", "Softmax",
    "LayerNormalization", "Transpose", "Slice", "Concat", "kiln.FusedMatMul", "kiln.Attention"};

// float32 data (bool masks allowed): the cases cpu must run.
bool all_float32(const OpCase& c) {
  for (const TensorSpec& t : c.inputs)
    if (!t.omitted() && t.dtype != DType::kFloat && !(t.dtype == DType::kBool && c.op == "kiln.Attention")) return false;
  return true;
}

// oneDNN's binary primitive reads its first operand at the output's shape: a case where both
// operands broadcast ([2,1,4] + [3,1]) is declined.
bool both_operands_broadcast(const OpCase& c) {
  static const std::set<std::string> binary = {"Add", "Sub", "Mul", "Div", "Max", "Min"};
  if (!binary.count(c.op)) return false;
  std::vector<int64_t> a = c.inputs[0].shape, b = c.inputs[1].shape;
  const size_t rank = std::max(a.size(), b.size());
  a.insert(a.begin(), rank - a.size(), 1);
  b.insert(b.begin(), rank - b.size(), 1);
  std::vector<int64_t> y(rank);
  for (size_t i = 0; i < rank; ++i) y[i] = std::max(a[i], b[i]);
  return a != y && b != y;
}

TEST(CpuProvider, RunsAndMatchesEveryStandardCaseOfItsOps) {
  providers::CpuProvider cpu;
  int matched = 0;
  for (const OpCase& c : standard_op_cases()) {
    if (!kAccelerated.count(c.op) || !all_float32(c)) continue;
    const bool declined = (c.op == "Gemm" && c.attributes.count("alpha")) || both_operands_broadcast(c);
    for (uint64_t seed : {5u, 6u}) {
      DifferentialResult r = check_against_reference(cpu, c, seed);
      EXPECT_EQ(r.verdict, declined ? Verdict::kDeclined : Verdict::kMatch) << c.label() << ": " << r.detail;
      matched += r.verdict == Verdict::kMatch;
    }
  }
  EXPECT_GE(matched, 80);
}

TEST(CpuProvider, DeclinesWithReasons) {
  providers::CpuProvider cpu;
  DifferentialResult erf = check_against_reference(cpu, {"Erf", 13, {{DType::kFloat, {2}}}}, 1);
  EXPECT_EQ(erf.verdict, Verdict::kDeclined);
  EXPECT_NE(erf.detail.find("no cpu kernel for Erf"), std::string::npos) << erf.detail;
  DifferentialResult sub = check_against_reference(cpu, {"Sub", 14, {{DType::kFloat, {4}}, {DType::kFloat, {3, 4}}}}, 1);
  EXPECT_EQ(sub.verdict, Verdict::kDeclined);
  EXPECT_NE(sub.detail.find("broadcasts its first operand"), std::string::npos) << sub.detail;
  DifferentialResult f64 = check_against_reference(cpu, {"MatMul", 17, {{DType::kDouble, {2, 3}}, {DType::kDouble, {3, 2}}}}, 1);
  EXPECT_EQ(f64.verdict, Verdict::kDeclined);
  EXPECT_NE(f64.detail.find("not float32"), std::string::npos) << f64.detail;
  DifferentialResult indices = check_against_reference(
      cpu, {"MaxPool", 12, {{DType::kFloat, {1, 1, 4, 4}}}, {{"kernel_shape", A::of_ints({2, 2})}}, 2}, 1);
  EXPECT_EQ(indices.verdict, Verdict::kDeclined);
  EXPECT_NE(indices.detail.find("Indices"), std::string::npos) << indices.detail;
}

}  // namespace
}  // namespace kiln::testing
