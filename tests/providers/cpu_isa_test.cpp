// Tests of the cpu provider's ISA levels: a cap keeps only the level's features of the host's,
// unknown levels are refused naming the known ones, and oneDNN implementation names map to the
// features of the level they name.
#include "kiln/providers/cpu/cpu_isa.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace kiln::providers::cpu {
namespace {

bool has(const std::vector<std::string>& features, const std::string& f) {
  return std::find(features.begin(), features.end(), f) != features.end();
}

TEST(CpuIsa, ACapKeepsOnlyTheLevelsFeaturesOfTheHosts) {
  const std::vector<std::string> host = host_features();
  EXPECT_TRUE(std::is_sorted(host.begin(), host.end()));
  EXPECT_EQ(target_features("").value(), host);
  const std::vector<std::string> avx2 = target_features("avx2").value();
  EXPECT_FALSE(has(avx2, "avx512f"));
  for (const std::string& f : avx2) EXPECT_TRUE(has(host, f)) << f;
  EXPECT_EQ(has(avx2, "avx2"), has(host, "avx2"));
}

TEST(CpuIsa, UnknownLevelsAreInvalidArgumentsNamingTheKnownOnes) {
  const Status unknown = target_features("avx9").status();
  EXPECT_EQ(unknown.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(unknown.message().find("avx512_core"), std::string::npos) << unknown.message();
  EXPECT_EQ(cap_isa("avx9").code(), StatusCode::kInvalidArgument);
}

TEST(CpuIsa, ImplementationsNeedTheFeaturesOfTheLevelTheyName) {
  const std::vector<std::string> core = implementation_features("brg:avx512_core");
  EXPECT_TRUE(has(core, "avx512f") && has(core, "avx512bw") && has(core, "avx2"));
  EXPECT_FALSE(has(core, "avx512vnni"));
  EXPECT_TRUE(has(implementation_features("jit:avx512_core_bf16"), "avx512bf16"));
  EXPECT_EQ(implementation_features("jit:avx2"), (std::vector<std::string>{"avx", "avx2", "fma"}));
  EXPECT_TRUE(implementation_features("gemm:jit").empty());
  EXPECT_TRUE(implementation_features("ref:any").empty());
}

}  // namespace
}  // namespace kiln::providers::cpu
