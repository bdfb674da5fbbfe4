// The differential harness on the providers this build has: cpu_ref must run every standard case
// (the cases themselves are valid), and a provider with a wrong kernel must be caught.
#include <gtest/gtest.h>

#include <map>

#include "kiln/providers/cpu_ref/cpu_ref_provider.h"
#include "kiln/providers/registry/provider_registry.h"
#include "support/test_target.h"
#include "support/differential.h"
#include "support/op_cases.h"

namespace kiln::testing {
namespace {

// The share of the standard cases each provider must run (not decline): cpu_ref runs every op;
// cpu declines the few dtypes and forms it leaves to cpu_ref (1164 of 1166 cases on Emerald Rapids,
// also at the AVX2 cap). A provider of the registry missing here fails the test until its share is
// stated.
const std::map<std::string, double> kRunShare = {{"cpu_ref", 1.0}, {"cpu", 0.99}};

TEST(Differential, EveryProviderMatchesTheReferenceOnTheStandardCases) {
  for (const std::string& name : providers::available_providers()) {
    auto provider = providers::make_provider(name, {kiln::testing::test_target()});
    ASSERT_TRUE(provider.is_ok());
    int compared = 0, cases = 0;
    for (const OpCase& c : standard_op_cases()) {
      for (uint64_t seed : {1u, 2u}) {
        DifferentialResult r = check_against_reference(*provider.value(), c, seed);
        EXPECT_TRUE(r.verdict == Verdict::kMatch || r.verdict == Verdict::kDeclined) << name << " " << c.label() << ": " << r.detail;
        compared += r.verdict == Verdict::kMatch;
        ++cases;
      }
    }
    const auto share = kRunShare.find(name);
    ASSERT_NE(share, kRunShare.end()) << "state the share of the standard cases provider '" << name << "' runs";
    EXPECT_GE(compared, share->second * cases) << name << " ran " << compared << " of " << cases << " cases";
  }
}

// cpu_ref with one kernel replaced: Relu that forgets to clamp.
class BrokenReluProvider final : public providers::Provider {
 public:
  std::string name() const override { return "broken"; }
  std::vector<std::string> op_types() const override { return {"Relu"}; }
  providers::Capability supports(const ir::Node& node) const override {
    return node.op_type == "Relu" ? providers::Capability::yes() : providers::Capability::no("only Relu");
  }
  Result<ops::Kernel> kernel_for(const ir::Node&, providers::KernelBuild&) const override {
    return ops::Kernel([](ops::KernelContext& ctx) {
      const Tensor* x = ctx.input(0);
      Tensor* y = ctx.output(0);
      for (int64_t i = 0; i < x->element_count(); ++i)
        y->data<float>()[i] = x->dtype() == DType::kFloat ? x->data<float>()[i] : 0.0f;
      return Status::ok();
    });
  }
};

TEST(Differential, CatchesAWrongKernelAndReportsDeclines) {
  BrokenReluProvider broken;
  DifferentialResult relu = check_against_reference(broken, {"Relu", 17, {{DType::kFloat, {64}}}}, 3);
  EXPECT_EQ(relu.verdict, Verdict::kMismatch);
  EXPECT_NE(relu.detail.find("output 0["), std::string::npos) << relu.detail;
  DifferentialResult add =
      check_against_reference(broken, {"Add", 17, {{DType::kFloat, {2}}, {DType::kFloat, {2}}}}, 3);
  EXPECT_EQ(add.verdict, Verdict::kDeclined);
  EXPECT_EQ(add.detail, "only Relu");
}

}  // namespace
}  // namespace kiln::testing
