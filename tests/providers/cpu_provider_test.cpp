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

const std::set<std::string> kAccelerated = {"Conv", "MatMul", "Gemm", "MaxPool", "AveragePool", "GlobalAveragePool",
                                            "GlobalMaxPool", "kiln.FusedConv"};

TEST(CpuProvider, RunsAndMatchesEveryStandardCaseOfItsOps) {
  providers::CpuProvider cpu;
  int matched = 0;
  for (const OpCase& c : standard_op_cases()) {
    if (!kAccelerated.count(c.op)) continue;
    const bool scaled_gemm = c.op == "Gemm" && c.attributes.count("alpha");
    for (uint64_t seed : {5u, 6u}) {
      DifferentialResult r = check_against_reference(cpu, c, seed);
      EXPECT_EQ(r.verdict, scaled_gemm ? Verdict::kDeclined : Verdict::kMatch) << c.label() << ": " << r.detail;
      matched += r.verdict == Verdict::kMatch;
    }
  }
  EXPECT_GE(matched, 30);
}

TEST(CpuProvider, DeclinesWithReasons) {
  providers::CpuProvider cpu;
  DifferentialResult add = check_against_reference(cpu, {"Add", 17, {{DType::kFloat, {2}}, {DType::kFloat, {2}}}}, 1);
  EXPECT_EQ(add.verdict, Verdict::kDeclined);
  EXPECT_NE(add.detail.find("no cpu kernel for Add"), std::string::npos) << add.detail;
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
