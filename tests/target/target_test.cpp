// Tests of the Target: the host's is detected once with its highest level, a cap keeps only the
// level's features, a level this machine lacks is an UnsupportedTarget naming the missing
// features, and an unknown level is an InvalidArgument naming the known ones.
#include "kiln/target/target.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace kiln::target {
namespace {

TEST(Target, TheHostsIsItsHighestLevelWithAllItsFeatures) {
  const Target& host = host_target();
  EXPECT_FALSE(host.capped);
  EXPECT_EQ(host.features, host_features());
  EXPECT_TRUE(std::is_sorted(host.features.begin(), host.features.end()));
  const std::vector<std::string> names = isa_level_names();
  const auto at = std::find(names.begin(), names.end(), host.level);
  ASSERT_NE(at, names.end()) << host.level;
  for (auto level = names.begin(); level <= at; ++level)
    for (const std::string& f : level_features(*level)) EXPECT_TRUE(host.has(f)) << *level << " needs " << f;
  if (at + 1 != names.end()) {
    const std::vector<std::string> next = level_features(*(at + 1));
    EXPECT_FALSE(std::all_of(next.begin(), next.end(), [&](const std::string& f) { return host.has(f); })) << *(at + 1);
  }
  EXPECT_EQ(host.vector_bits, host.has("avx512f") ? 512 : 256);
  EXPECT_EQ(host.float_lanes(), host.vector_bits / 32);
  EXPECT_GE(host.cores, 1);
  EXPECT_EQ(make_target("").value().features, host.features);
}

TEST(Target, ACapKeepsOnlyTheLevelsFeatures) {
  const Target avx2 = make_target("avx2").value();
  EXPECT_TRUE(avx2.capped);
  EXPECT_EQ(avx2.level, "avx2");
  EXPECT_EQ(avx2.vector_bits, 256);
  EXPECT_EQ(avx2.features, (std::vector<std::string>{"avx", "avx2", "fma"}));
  EXPECT_FALSE(avx2.int8_dot() || avx2.bf16());
  EXPECT_NE(avx2.describe().find("capped"), std::string::npos);
}

TEST(Target, ALevelThisMachineLacksNamesTheMissingFeatures) {
  for (const std::string& level : isa_level_names()) {
    const Result<Target> t = make_target(level);
    std::vector<std::string> missing;
    for (const std::string& f : level_features(level))
      if (!host_target().has(f)) missing.push_back(f);
    if (missing.empty()) {
      EXPECT_TRUE(t.is_ok()) << level << ": " << t.status().to_string();
      EXPECT_EQ(t.value().level, level);
      continue;
    }
    ASSERT_FALSE(t.is_ok()) << level;
    EXPECT_EQ(t.status().code(), StatusCode::kUnsupportedTarget);
    for (const std::string& f : missing) EXPECT_NE(t.status().message().find(f), std::string::npos) << t.status().message();
  }
}

TEST(Target, AnAvx2MachineRefusesAvx512NamingWhatItLacks) {
  Target zen3;  // an AVX2-only machine, whatever this one is
  zen3.level = "avx2";
  zen3.features = {"avx", "avx2", "fma"};
  const Status refused = capped_target(zen3, "avx512_core").status();
  EXPECT_EQ(refused.code(), StatusCode::kUnsupportedTarget);
  for (const char* f : {"avx512bw", "avx512cd", "avx512dq", "avx512f", "avx512vl"})
    EXPECT_NE(refused.message().find(f), std::string::npos) << refused.message();
  EXPECT_NE(refused.message().find("this machine: avx2"), std::string::npos) << refused.message();
  EXPECT_EQ(capped_target(zen3, "avx2").value().features, zen3.features);
}

TEST(Target, UnknownLevelsAreInvalidArgumentsNamingTheKnownOnes) {
  const Status unknown = make_target("avx9").status();
  EXPECT_EQ(unknown.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(unknown.message().find("avx512_core"), std::string::npos) << unknown.message();
  EXPECT_TRUE(level_features("avx9").empty());
}

}  // namespace
}  // namespace kiln::target
