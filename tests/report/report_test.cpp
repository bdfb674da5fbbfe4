// Tests of the report's run section: first run and steady latencies, and a bound on the kept
// latencies so that a long-lived session's report does not grow without end.
#include "kiln/report/report.h"

#include <gtest/gtest.h>

namespace kiln::report {
namespace {

TEST(RunSection, SteadyLatenciesLeaveOutTheFirstRun) {
  RunSection r;
  for (double ms : {9.0, 2.0, 3.0}) r.record(ms);
  EXPECT_EQ(r.runs, 3);
  EXPECT_EQ(r.first_run_ms, 9.0);
  EXPECT_EQ(r.steady(), (std::vector<double>{2.0, 3.0}));
}

TEST(RunSection, KeepsABoundedWindowOfTheLatestLatencies) {
  RunSection r;
  const size_t total = 3 * RunSection::kKeptLatencies + 7;
  for (size_t i = 0; i < total; ++i) r.record(static_cast<double>(i));
  EXPECT_EQ(r.runs, static_cast<int64_t>(total));
  EXPECT_LT(r.latencies_ms.size(), 2 * RunSection::kKeptLatencies);
  EXPECT_EQ(static_cast<size_t>(r.dropped_latencies) + r.latencies_ms.size(), total);
  EXPECT_EQ(r.latencies_ms.back(), static_cast<double>(total - 1));
  EXPECT_EQ(r.steady().size(), r.latencies_ms.size()) << "the first run is long gone";
  EXPECT_EQ(r.first_run_ms, 0.0);
}

}  // namespace
}  // namespace kiln::report
