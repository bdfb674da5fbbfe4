// Tests of the Tuner on candidates whose times are given: the fastest wins and is cached, a second
// tuner reads the cache without running anything, a corrupt or foreign entry is counted and
// measured again, a spent budget or a disabled tuner leaves the choice to the heuristic, and a
// candidate that fails is left out.
#include "kiln/providers/tuning.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "kiln/io/file.h"
#include "support/model_builder.h"

namespace kiln::providers {
namespace {

using kiln::testing::ScratchDir;

constexpr const char* kTarget = "avx2 (256-bit: avx avx2 fma)";
constexpr const char* kProblem = "Conv x[1,64,56,56] w[64,64,3,3] threads 2";

// Candidates "a" (2 ms) and "b" (1 ms), counting their runs.
struct Timed {
  int runs = 0;
  std::vector<TacticCandidate> candidates() {
    return {{"a", [this]() -> Result<double> { ++runs; return 2.0; }}, {"b", [this]() -> Result<double> { ++runs; return 1.0; }}};
  }
};

io::ObjectCache cache_in(const ScratchDir& dir) { return io::ObjectCache(dir.file("tactics"), 1 << 20, ".json"); }

// The cache entry's file (the only one).
std::string entry_file(const ScratchDir& dir) {
  for (const auto& e : std::filesystem::directory_iterator(dir.file("tactics")))
    if (e.path().extension() == ".json") return e.path().string();
  return "";
}

TEST(Tuner, TheFastestCandidateWinsAndASecondTunerReadsItFromTheCache) {
  ScratchDir dir("tuning");
  Timed timed;
  Tuner first(kTarget, cache_in(dir), 1000);
  EXPECT_EQ(first.choose("conv", kProblem, timed.candidates(), "a"), "b");
  EXPECT_EQ(timed.runs, 2);
  const TuningStats measured = first.stats();
  EXPECT_EQ(measured.measured, 1);
  ASSERT_EQ(measured.choices.size(), 1u);
  EXPECT_EQ(measured.choices[0].source, "measured");
  EXPECT_EQ(measured.choices[0].candidate_ms, (std::map<std::string, double>{{"a", 2.0}, {"b", 1.0}}));

  Tuner second(kTarget, cache_in(dir), 1000);
  EXPECT_EQ(second.choose("conv", kProblem, timed.candidates(), "a"), "b");
  EXPECT_EQ(timed.runs, 2) << "a cached choice runs nothing";
  EXPECT_EQ(second.stats().cache_hits, 1);
  EXPECT_EQ(second.stats().choices[0].source, "cache");
  EXPECT_EQ(second.stats().spent_ms, 0);

  // Another target, or another problem, is another entry.
  Tuner other(std::string(kTarget) + " capped", cache_in(dir), 1000);
  EXPECT_EQ(other.choose("conv", kProblem, timed.candidates(), "a"), "b");
  EXPECT_EQ(other.stats().measured, 1);
}

TEST(Tuner, ACorruptEntryIsCountedAndMeasuredAgain) {
  ScratchDir dir("tuning");
  Timed timed;
  Tuner(kTarget, cache_in(dir), 1000).choose("conv", kProblem, timed.candidates(), "a");
  std::ofstream(entry_file(dir), std::ios::binary | std::ios::trunc) << R"({"chosen": "a"})";  // its digest no longer matches
  Tuner again(kTarget, cache_in(dir), 1000);
  EXPECT_EQ(again.choose("conv", kProblem, timed.candidates(), "a"), "b");
  EXPECT_EQ(again.stats().cache_corrupted, 1);
  EXPECT_EQ(again.stats().measured, 1);
  EXPECT_EQ(timed.runs, 4);
}

TEST(Tuner, AForeignEntryIsCountedAndNeverTrusted) {
  ScratchDir dir("tuning");
  Timed timed;
  Tuner(kTarget, cache_in(dir), 1000).choose("conv", kProblem, timed.candidates(), "a");
  // A well-formed entry under this problem's key that records another key (and the slower winner).
  const std::string path = entry_file(dir);
  const std::string key = std::filesystem::path(path).stem().string();
  ASSERT_TRUE(cache_in(dir).insert_bytes(key, R"({"key": "another", "candidate_ms": {"a": 1}, "chosen": "a"})").is_ok());
  Tuner again(kTarget, cache_in(dir), 1000);
  EXPECT_EQ(again.choose("conv", kProblem, timed.candidates(), "a"), "b");
  EXPECT_EQ(again.stats().cache_foreign, 1);
  EXPECT_EQ(again.stats().measured, 1);
}

TEST(Tuner, ASpentBudgetOrADisabledTunerLeavesTheChoiceToTheHeuristic) {
  ScratchDir dir("tuning");
  Timed timed;
  Tuner broke(kTarget, cache_in(dir), 0);
  EXPECT_EQ(broke.choose("conv", kProblem, timed.candidates(), "a"), "a");
  EXPECT_EQ(broke.stats().choices[0].source, "budget");
  Tuner off;
  EXPECT_EQ(off.choose("conv", kProblem, timed.candidates(), "a"), "a");
  EXPECT_FALSE(off.stats().enabled);
  EXPECT_EQ(off.stats().choices[0].source, "heuristic");
  EXPECT_EQ(timed.runs, 0);
}

TEST(Tuner, ACandidateThatFailsIsLeftOut) {
  ScratchDir dir("tuning");
  Tuner tuner(kTarget, cache_in(dir), 1000);
  const std::vector<TacticCandidate> candidates = {
      {"fast_but_broken", []() -> Result<double> { return internal_error("cannot run"); }},
      {"slow", []() -> Result<double> { return 5.0; }}};
  EXPECT_EQ(tuner.choose("conv", kProblem, candidates, "fast_but_broken"), "slow");
  EXPECT_EQ(tuner.stats().choices[0].candidate_ms.size(), 1u);
}

}  // namespace
}  // namespace kiln::providers
