// Run limits (ops/run_limits.h): a Loop above SessionOptions::max_loop_iterations is refused
// naming the node (before it starts when its trip count says so, else when it reaches the bound);
// RunOptions::timeout_ms ends a run at a kernel boundary or a Loop iteration with a Cancelled
// status; terminate from another thread ends a Loop too; the session runs on afterwards.
#include <gtest/gtest.h>

#include <thread>

#include "kiln/session.h"
#include "support/loop_model.h"
#include "support/model_builder.h"

namespace kiln {
namespace {

using testing::loop_model;

std::map<std::string, Tensor> feeds(std::optional<int64_t> trip_count, bool with_cond) {
  std::map<std::string, Tensor> in = {{"x", Tensor::from_vector<float>(DType::kFloat, {1}, {0.0f})}};
  if (trip_count) in["M"] = Tensor::from_vector<int64_t>(DType::kInt64, {}, {*trip_count});
  if (with_cond) in["cond"] = Tensor::from_vector<bool>(DType::kBool, {}, {true});
  return in;
}

std::unique_ptr<Session> load(const std::string& path, SessionOptions options = {}) {
  auto session = Session::load(path, options);
  EXPECT_TRUE(session.is_ok()) << session.status().to_string();
  return session.is_ok() ? std::move(session).value() : nullptr;
}

float y_after(Session& session, int64_t trip_count) {
  auto out = session.run(feeds(trip_count, false));
  EXPECT_TRUE(out.is_ok()) << out.status().to_string();
  return out.is_ok() ? out.value().at("y").data<float>()[0] : -1.0f;
}

void expect_status(const Status& status, StatusCode code, const std::vector<std::string>& parts) {
  EXPECT_EQ(status.code(), code) << status.to_string();
  for (const std::string& part : parts) EXPECT_NE(status.message().find(part), std::string::npos) << status.message();
}

TEST(RunLimits, ALoopWhoseTripCountIsAboveTheBoundIsRefusedBeforeItStarts) {
  testing::ScratchDir dir("limits");
  for (ExecutionMode mode : {ExecutionMode::kGraph, ExecutionMode::kEager}) {
    SessionOptions options;
    options.mode = mode;
    auto session = load(loop_model(dir, true, false), options);
    ASSERT_TRUE(session);
    auto refused = session->run(feeds(int64_t{1'000'000'000'000}, false));  // the default bound: 10^8
    ASSERT_FALSE(refused.is_ok());
    expect_status(refused.status(), StatusCode::kInvalidArgument, {"count_up", "1000000000000", "max_loop_iterations"});
    EXPECT_EQ(y_after(*session, 7), 7.0f);  // the session runs on
  }
}

TEST(RunLimits, AConditionDrivenLoopStopsAtTheBound) {
  testing::ScratchDir dir("limits");
  SessionOptions options;
  options.max_loop_iterations = 1000;
  auto session = load(loop_model(dir, false, true), options);
  ASSERT_TRUE(session);
  auto refused = session->run(feeds(std::nullopt, true));  // cond stays true forever
  ASSERT_FALSE(refused.is_ok());
  expect_status(refused.status(), StatusCode::kInvalidArgument, {"count_up", "more than 1000 iterations"});
  SessionOptions negative;
  negative.max_loop_iterations = -1;
  EXPECT_EQ(Session::load(loop_model(dir, false, true), negative).status().code(), StatusCode::kInvalidArgument);
}

TEST(RunLimits, ATimeoutEndsALongLoopAndTheSessionRunsOn) {
  testing::ScratchDir dir("limits");
  SessionOptions options;
  options.max_loop_iterations = 0;  // unbounded: only the deadline stops it
  auto session = load(loop_model(dir, true, false), options);
  ASSERT_TRUE(session);
  RunOptions run_options;
  run_options.timeout_ms = 50;
  run_options.tag = "long-loop";
  auto stopped = session->run(feeds(int64_t{1'000'000'000'000}, false), run_options);
  ASSERT_FALSE(stopped.is_ok());
  expect_status(stopped.status(), StatusCode::kCancelled, {"deadline (timeout 50 ms)", "iteration", "count_up", "long-loop"});
  auto again = session->run(feeds(int64_t{5}, false), run_options);  // the same options, a short loop
  ASSERT_TRUE(again.is_ok()) << again.status().to_string();
  EXPECT_EQ(again.value().at("y").data<float>()[0], 5.0f);
}

TEST(RunLimits, TerminateFromAnotherThreadEndsALoop) {
  testing::ScratchDir dir("limits");
  SessionOptions options;
  options.max_loop_iterations = 0;
  auto session = load(loop_model(dir, false, true), options);
  ASSERT_TRUE(session);
  RunOptions run_options;
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    run_options.terminate = true;
  });
  auto stopped = session->run(feeds(std::nullopt, true), run_options);
  stopper.join();
  ASSERT_FALSE(stopped.is_ok());
  expect_status(stopped.status(), StatusCode::kCancelled, {"terminated before", "iteration", "count_up"});
}

TEST(RunLimits, ATimeoutIsCheckedAtKernelBoundariesAndMustNotBeNegative) {
  testing::ScratchDir dir("limits");
  auto session = load(loop_model(dir, true, false));
  ASSERT_TRUE(session);
  RunOptions run_options;
  run_options.timeout_ms = 1e-9;  // passed before the first kernel
  auto stopped = session->run(feeds(int64_t{3}, false), run_options);
  ASSERT_FALSE(stopped.is_ok());
  expect_status(stopped.status(), StatusCode::kCancelled, {"deadline", "passed before"});
  run_options.timeout_ms = -1;
  EXPECT_EQ(session->run(feeds(int64_t{3}, false), run_options).status().code(), StatusCode::kInvalidArgument);
  run_options.timeout_ms = 0;  // none
  EXPECT_TRUE(session->run(feeds(int64_t{3}, false), run_options).is_ok());
}

}  // namespace
}  // namespace kiln
