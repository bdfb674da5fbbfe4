// SessionOptions::memory_limit: a load whose weights pass it and a run whose shapes would pass it
// are refused before they allocate (AllocationFailure naming the planned bytes, the limit and the
// largest buffers); a value too large for it made mid-run ends that run only; the session runs on;
// the report shows the limit, the planned use and the peak; outputs a caller keeps count until freed.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "kiln/session.h"
#include "support/model_builder.h"

namespace kiln {
namespace {

using testing::ModelBuilder;
using testing::ScratchDir;
constexpr int kFloat = onnx::TensorProto::FLOAT;
constexpr int kInt64 = onnx::TensorProto::INT64;

// y = Relu(x[N,256] W1) W2 (weights 2 x 256 KiB); big = Expand(1.0, shape) (a size known only
// when it runs).
std::string model(const ScratchDir& dir) {
  ModelBuilder b;
  b.input("x", kFloat, {std::string("N"), int64_t{256}});
  b.input("shape", kInt64, {int64_t{1}});
  b.output("y", kFloat, {std::string("N"), int64_t{256}});
  b.output("big", kFloat, {std::string("B")});
  std::vector<float> w(256 * 256);
  for (size_t i = 0; i < w.size(); ++i) w[i] = 0.001f * static_cast<float>(i % 13) - 0.006f;
  b.float_initializer("w1", {256, 256}, w);
  b.float_initializer("w2", {256, 256}, w);
  b.float_initializer("one", {1}, {1.0f});
  b.node("MatMul", {"x", "w1"}, {"h"}, "first_matmul");
  b.node("Relu", {"h"}, {"r"}, "relu");
  b.node("MatMul", {"r", "w2"}, {"y"}, "second_matmul");
  b.node("Expand", {"one", "shape"}, {"big"}, "expand");
  return b.save(dir.file("limit.onnx"));
}

std::map<std::string, Tensor> feeds(int64_t rows, int64_t big) {
  return {{"x", random_tensor(DType::kFloat, {rows, 256}, 5)},
          {"shape", Tensor::from_vector<int64_t>(DType::kInt64, {1}, {big})}};
}

nlohmann::json memory_report(const Session& session) { return nlohmann::json::parse(session.report_json())["memory"]; }

// What a session of the model holds after a small run, with no limit.
int64_t held_after_a_small_run(const std::string& path) {
  auto session = Session::load(path);
  EXPECT_TRUE(session.is_ok()) << session.status().to_string();
  if (!session.is_ok()) return 0;
  EXPECT_TRUE(session.value()->run(feeds(1, 1)).is_ok());
  return memory_report(*session.value())["in_use_bytes"].get<int64_t>();
}

// A session of the model whose memory limit leaves `headroom` bytes above what a small run holds.
std::unique_ptr<Session> limited_session(const std::string& path, int64_t headroom) {
  SessionOptions options;
  options.memory_limit = held_after_a_small_run(path) + headroom;
  auto session = Session::load(path, options);
  EXPECT_TRUE(session.is_ok()) << session.status().to_string();
  return session.is_ok() ? std::move(session).value() : nullptr;
}

int64_t limit_of(const Session& session) { return memory_report(session)["limit_bytes"]; }

void expect_mentions(const Status& status, const std::vector<std::string>& parts) {
  EXPECT_EQ(status.code(), StatusCode::kAllocationFailure) << status.to_string();
  for (const std::string& part : parts) EXPECT_NE(status.message().find(part), std::string::npos) << part << " in " << status.message();
}

TEST(MemoryLimit, WeightsPastTheLimitAreRefusedAtLoad) {
  ScratchDir dir("memory-limit");
  SessionOptions options;
  options.memory_limit = 100 << 10;  // the weights alone are 512 KiB
  const Status refused = Session::load(model(dir), options).status();
  expect_mentions(refused, {"memory limit 102400 bytes"});
  options.memory_limit = -1;
  EXPECT_EQ(Session::load(model(dir), options).status().code(), StatusCode::kInvalidArgument);
}

TEST(MemoryLimit, ARunWhoseShapesWouldPassTheLimitIsRefusedBeforeItAllocates) {
  ScratchDir dir("memory-limit");
  auto session = limited_session(model(dir), (1 << 20));
  ASSERT_TRUE(session);
  ASSERT_TRUE(session->run(feeds(1, 1)).is_ok());
  const int64_t held = memory_report(*session)["in_use_bytes"];
  // 4096 rows: an arena of 4 MiB and an output of 4 MiB.
  const Status refused = session->run(feeds(4096, 1)).status();
  expect_mentions(refused, {"the plan for input shapes [4096,256]", "needs", "arena", "outputs",
                            "memory limit " + std::to_string(limit_of(*session)) + " bytes", "largest buffers: '"});
  EXPECT_EQ(memory_report(*session)["in_use_bytes"], held) << "the refused run allocated nothing it kept";
  auto small = session->run(feeds(2, 1));
  ASSERT_TRUE(small.is_ok()) << small.status().to_string();
  EXPECT_EQ(small.value().at("y").shape(), (std::vector<int64_t>{2, 256}));
}

TEST(MemoryLimit, AValueTooLargeForTheLimitMadeMidRunEndsThatRunOnly) {
  ScratchDir dir("memory-limit");
  auto session = limited_session(model(dir), (1 << 20));
  ASSERT_TRUE(session);
  const Status refused = session->run(feeds(1, int64_t{1} << 22)).status();  // 16 MiB from Expand
  expect_mentions(refused, {"expand", "memory limit"});
  auto next = session->run(feeds(1, 1000));
  ASSERT_TRUE(next.is_ok()) << next.status().to_string();
  EXPECT_EQ(next.value().at("big").element_count(), 1000);
}

TEST(MemoryLimit, TheReportShowsTheLimitThePlannedUseAndThePeak) {
  ScratchDir dir("memory-limit");
  auto session = limited_session(model(dir), (4 << 20));
  ASSERT_TRUE(session);
  ASSERT_TRUE(session->run(feeds(512, 1000)).is_ok());
  const nlohmann::json m = memory_report(*session);
  EXPECT_GT(m["limit_bytes"].get<int64_t>(), 4 << 20) << m;
  EXPECT_GT(m["planned_bytes"].get<int64_t>(), 2 * 256 * 256 * 4) << "the weights at least: " << m;
  EXPECT_LE(m["planned_bytes"].get<int64_t>(), m["limit_bytes"].get<int64_t>()) << m;
  EXPECT_LE(m["peak_bytes"].get<int64_t>(), m["limit_bytes"].get<int64_t>()) << m;
  EXPECT_GE(m["peak_bytes"].get<int64_t>(), m["in_use_bytes"].get<int64_t>() + 512 * 256 * 4) << "the run's output was freed: " << m;
  EXPECT_NE(session->report_summary().find("budget"), std::string::npos);
}

TEST(MemoryLimit, OutputsACallerKeepsCountUntilFreed) {
  ScratchDir dir("memory-limit");
  auto session = limited_session(model(dir), 64 << 20);
  ASSERT_TRUE(session);
  ASSERT_TRUE(session->run(feeds(1, 1)).is_ok());
  const int64_t before = memory_report(*session)["in_use_bytes"];
  auto kept = session->run(feeds(1, 1 << 18));  // a 1 MiB output kept
  ASSERT_TRUE(kept.is_ok()) << kept.status().to_string();
  EXPECT_GE(memory_report(*session)["in_use_bytes"].get<int64_t>(), before + (1 << 20));
  kept.value().clear();
  EXPECT_LT(memory_report(*session)["in_use_bytes"].get<int64_t>(), before + (1 << 20));
}

}  // namespace
}  // namespace kiln
